/**
 * CommonJS twins of the bundle's ES module files (`x.mjs` → `x.cjs`), which
 * the `agentwire` bin (src/cli-loader.ts) runs through V8's code cache.
 *
 * Why: Node 20 compiles every ES module from its source at every start and
 * offers no code cache for them (module.enableCompileCache is Node 22);
 * compiling the ~750 KB serve's start loads was ~20 % of its start-up CPU.
 * A `vm.Script` takes cached data, so the same code, as scripts, can start
 * from bytecode V8 wrote on an earlier run. esbuild converts each file
 * (imports become `require`, exports getters: live bindings are kept);
 * the loader gives the twins a `require` that maps `./x.mjs` to x.cjs, so
 * they share one registry and no module is evaluated twice.
 *
 * Dynamic imports are renamed first (DYNAMIC_IMPORT, found with
 * es-module-lexer, which tells `import(` from the word in strings, regexes
 * and comments): a script run by `vm` has no `import()` of its own on Node 20
 * without --experimental-vm-modules, so the loader provides one.
 */
import { build } from "esbuild";
import { init, parse } from "es-module-lexer";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DYNAMIC_IMPORT, IMPORT_META, TWIN_MANIFEST, TWIN_PARAMETERS, twinName } from "../cli-twin-names.js";

/** Blanks `text` out with spaces of the same length (lines and columns stay put). */
const blank = (text: string) => text.replace(/[^\n]/g, " ");

/**
 * Writes the twin of each of `names` (files of `dir`) and the manifest.
 * A file's own `require` (the bundle's banner: Node's, for the CommonJS
 * packages bundled in) stays: esbuild renames it, since the twin's `require`
 * is the loader's, which its imports became.
 */
export async function writeCommonJsTwins(dir: string, names: string[]): Promise<void> {
  await init;
  const manifest: Record<string, string> = {};
  for (const name of names) {
    let source = readFileSync(join(dir, name), "utf8");
    if (source.startsWith("#!")) source = blank(source.slice(0, source.indexOf("\n"))) + source.slice(source.indexOf("\n"));
    if (source.includes(DYNAMIC_IMPORT)) throw new Error(`bundle: ${name} already holds ${DYNAMIC_IMPORT}, the name twins give import()`);
    const [imports] = parse(source, name);
    let renamed = source;
    for (const entry of imports) {
      if (entry.d < 0) continue; // a static import (-1) or import.meta (-2)
      if (renamed.slice(entry.ss, entry.ss + 6) !== "import") throw new Error(`bundle: ${name}: no import( at ${entry.ss}`);
      renamed = renamed.slice(0, entry.ss) + DYNAMIC_IMPORT + renamed.slice(entry.ss + 6);
    }
    const result = await build({
      stdin: { contents: renamed, sourcefile: name, resolveDir: dir, loader: "js" },
      bundle: false,
      platform: "node",
      target: "node20",
      format: "cjs",
      define: { "import.meta.url": `${IMPORT_META}.url`, "import.meta.resolve": `${IMPORT_META}.resolve` },
      minifyWhitespace: true,
      minifySyntax: true,
      // The file's own map (its sourceMappingURL comment) is followed: the twin's points into src/ too.
      sourcemap: true,
      outfile: join(dir, twinName(name)),
      write: false,
      logLevel: "silent",
    });
    // Any warning (another use of import.meta, say) would be a difference from the ES module: refuse it.
    if (result.warnings.length > 0) throw new Error(`bundle: ${name}'s twin: ${result.warnings.map((w) => w.text).join("; ")}`);
    // The function the loader calls, written into the file: compiled as it is read, with no copy to join it
    // to a wrapper (a copy of ~460 KB for serve's file cost ~1.5 ms). Its first line moves the code one line down.
    const code = result.outputFiles.find((file) => file.path.endsWith(".cjs"))!;
    const map = result.outputFiles.find((file) => file.path.endsWith(".cjs.map"))!;
    const text = `(function (${TWIN_PARAMETERS.join(", ")}) {"use strict";\n${code.text}\n})`;
    const moved = JSON.parse(map.text) as { mappings: string };
    moved.mappings = `;${moved.mappings}`;
    writeFileSync(code.path, text);
    writeFileSync(map.path, JSON.stringify(moved));
    manifest[name] = createHash("sha256").update(text).digest("base64url").slice(0, 16);
  }
  writeFileSync(join(dir, TWIN_MANIFEST), `${JSON.stringify(manifest)}\n`);
}
