/**
 * Builds dist/bundle, what `npm start`, the `agentwire` bin and the package's
 * `exports` run (`npm run bundle`): one esbuild build with code splitting of
 * the CLI, the two worker threads' entries, agentwire/embed and
 * agentwire/client, then the CLI's start paths merged (mergeStartPaths).
 *
 * Why merge: esbuild makes a chunk of every set of entry points (static or
 * lazily imported) that share modules, so serve's start loaded 47 files, most
 * of them under 4 KB, and Node 20's ESM loader pays for each file and each
 * import between them (resolution with realpath, an asynchronous read, link:
 * ~0.5 ms a file on a 2-core host). After the merge it loads the command
 * line (cli-main.mjs), its modules (CLI_MODULES), serve-start's file, and the chunks
 * it shares with the unmerged entries (UNMERGED_ENTRIES), merged by the set
 * of those entries that load them (shared-N-ENTRIES.mjs); a one-shot chat
 * loads ~20 files where it loaded 56.
 */
import { build, type BuildOptions, type Metafile, type Plugin } from "esbuild";
import { chmodSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { CLI_MAIN } from "../cli-twin-names.js";
import { writeCommonJsTwins } from "./commonjs-twins.js";

/** Every chunk can `require` (the CommonJS packages bundled in need it for Node's modules). */
const BANNER = "import { createRequire as __agentwireRequire } from 'node:module'; const require = __agentwireRequire(import.meta.url);";

/** What both passes write: ES modules for Node 20, whitespace and syntax minified, with source maps. */
const OUTPUT: BuildOptions = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  // ws's optional native addons: loaded when installed (bufferutil is an optional dependency), never bundled.
  external: ["bufferutil", "utf-8-validate"],
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  logLevel: "warning",
};

const COMMON: BuildOptions = {
  ...OUTPUT,
  splitting: true,
  mainFields: ["module", "main"],
  outExtension: { ".js": ".mjs" },
  banner: { js: BANNER },
  metafile: true,
};

const ENTRIES = {
  "cli-main": "src/cli.ts",
  "offload-worker": "src/tools/offload/offload-worker.ts",
  "socket-thread-worker": "src/transport/socket-thread-worker.ts",
  embed: "src/embed.ts",
  client: "clients/typescript/index.ts",
};

/**
 * The entries whose chunks stay as esbuild wrote them: a worker's isolate or
 * a client-only process would otherwise load a merged file of the server's
 * for the few modules it shares with it.
 */
/** The bin's source (dist/bundle/cli.cjs). */
const LOADER = "src/cli-loader.ts";

const UNMERGED_ENTRIES = ["offload-worker.mjs", "socket-thread-worker.mjs", "client.mjs"];

/** The bin, in dist/bundle (package.json `bin`, `npm start`). */
const BIN = "cli.cjs";

/**
 * The bin is CommonJS: Node runs an ES module entry through its ES module
 * loader (a module job, and a facade for each of Node's modules it imports),
 * which cost every start ~3–5 ms more than the same loader as CommonJS
 * (serve's listening line, alternated launches; bench/README.md, twenty-first
 * round). Its source is an ES module like the rest: `import.meta` is defined
 * from the file's own path (`resolve` with require's resolution, which the
 * twins ask of it only from source, never in the bundle).
 */
const LOADER_OUTPUT = (outfile: string): BuildOptions => ({
  ...OUTPUT,
  format: "cjs",
  entryPoints: [LOADER],
  outfile,
  define: { "import.meta.url": "__binUrl", "import.meta.resolve": "__binResolve" },
  banner: {
    // Strict first, as the ES module it was written as (esbuild's own "use strict" comes after the banner).
    js: '"use strict"; const __binUrl = require("node:url").pathToFileURL(__filename).href; const __binResolve = (id) => require("node:url").pathToFileURL(require.resolve(id)).href;',
  },
});

/** The entries no twin is written of: the workers (their threads load ES modules) and the package's exports (the bin is CommonJS itself). */
const NOT_TWINNED = new Set(["offload-worker.mjs", "socket-thread-worker.mjs", "client.mjs", "embed.mjs"]);

/**
 * The lazily loaded start paths, in the order they load after the command
 * line: serve's start, and a client command's (chat, whose embedded server
 * loads serve's path too). Each one's static imports not on an earlier path
 * are merged into its root's file.
 */
const LAZY_START_PATHS = ["src/serve-start.ts", "src/chat/chat-command.ts"];

/**
 * The file that holds the command line's modules (every command loads it
 * with cli-main.mjs). Not cli-main.mjs itself: agentwire/embed imports some
 * of them, and importing cli-main.mjs runs the command line.
 */
const CLI_MODULES = "cli-modules.mjs";

type Outputs = Map<string, Metafile["outputs"][string]>;

/** `root` and every output it imports statically, by file name, in evaluation order (each after what it imports). */
function staticClosure(outputs: Outputs, root: string): string[] {
  const seen = new Set<string>();
  const order: string[] = [];
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const i of outputs.get(name)!.imports) if (i.kind === "import-statement" && !i.external) visit(basename(i.path));
    order.push(name);
  };
  visit(root);
  return order;
}

interface Group {
  /** The file the group is written to. */
  host: string;
  /** The member whose exports keep their names and whose file is the host, if any. */
  root?: string;
  /** The outputs merged into the host, in evaluation order. */
  members: string[];
}

/** The name member `member`'s export `name` has in its group's host: a root's keep theirs, the others' are prefixed with the member's index. */
function exportedAs(group: Group, member: string, name: string, index: Map<string, number>): string {
  return member === group.root ? name : `m${index.get(member)}$${name}`;
}

/** A module that re-exports `member`'s exports, under their own names, from its group's host. */
function reexports(group: Group, member: string, outputs: Outputs, index: Map<string, number>): string {
  const names = outputs.get(member)!.exports;
  if (names.length === 0) return `import "./${group.host}";\n`;
  return `export { ${names.map((n) => `${exportedAs(group, member, n, index)} as ${n}`).join(", ")} } from "./${group.host}";\n`;
}

/** The source map of a stub, which has no source of its own (every file of the bundle has a map: the tests read them). */
const EMPTY_MAP = `${JSON.stringify({ version: 3, sources: [], names: [], mappings: "" })}\n`;

/**
 * Merges the start paths' chunks (see the header). The groups: the command
 * line's chunks (CLI_MODULES), cli-main.mjs alone, each lazy start path, the
 * start paths' chunks the unmerged entries load too (by the set of those
 * entries), and every other file that imports a merged chunk, alone. Each group is bundled again
 * by esbuild into one file: a chunk merged elsewhere is read from that
 * group's file, under the name it has there (exportedAs). A merged chunk that
 * is imported lazily leaves a stub in its place, which re-exports it from its
 * group's file. Evaluation order is unchanged: a group's file imports its
 * members in the order the original files evaluated them, and what they
 * import from other groups was evaluated before them already.
 */
async function mergeStartPaths(dir: string, metafile: Metafile): Promise<void> {
  const outputs: Outputs = new Map(
    Object.entries(metafile.outputs)
      .filter(([path]) => path.endsWith(".mjs"))
      .map(([path, output]) => [basename(path), output]),
  );
  const rootOf = (source: string) => {
    const found = [...outputs].find(([, output]) => output.entryPoint === source)?.[0];
    if (!found) throw new Error(`bundle: no output has ${source} as its entry point`);
    return found;
  };
  const unmerged = new Set(UNMERGED_ENTRIES.flatMap((entry) => staticClosure(outputs, entry)));
  const cliClosure = staticClosure(outputs, CLI_MAIN);
  const taken = new Set(cliClosure);
  const groups: Group[] = [
    { host: CLI_MODULES, members: cliClosure.filter((name) => name !== CLI_MAIN && !unmerged.has(name)) },
    { host: CLI_MAIN, root: CLI_MAIN, members: [CLI_MAIN] },
  ];
  // Each start path's chunks (not on an earlier path), the command line's first. What two lazy start paths share goes
  // with the command line's modules, which both load: left on serve's path, it made a client command speaking to a
  // running server (--url, or the serve holding the data dir) load serve's whole start (~450 KB) for the mode table
  // (~2 KB).
  const paths = [cliClosure];
  const lazy = LAZY_START_PATHS.map(rootOf).map((root) => ({ root, closure: staticClosure(outputs, root).filter((name) => !taken.has(name)) }));
  const roots = new Set(lazy.map(({ root }) => root));
  const uses = new Map<string, number>();
  for (const { closure } of lazy) for (const name of closure) uses.set(name, (uses.get(name) ?? 0) + 1);
  // In evaluation order: a shared chunk's imports are shared too (or the command line's), and come first in each closure.
  // (Those a worker loads too stay where they were, in the files merged by the workers loading them.)
  const common = [...new Set(lazy.flatMap(({ closure }) => closure))].filter((name) => uses.get(name)! > 1 && !roots.has(name) && !unmerged.has(name));
  for (const name of common) taken.add(name);
  groups[0]!.members.push(...common);
  for (const { root, closure } of lazy) {
    const own = closure.filter((name) => !taken.has(name));
    for (const name of own) taken.add(name);
    paths.push(own);
    groups.push({ host: root, root, members: own.filter((name) => !unmerged.has(name)) });
  }
  // A path's chunks that unmerged entries load too: one file for those the same entries load (loading one, a process
  // loads only what it loaded before, in fewer files).
  const loadedBy = new Map(UNMERGED_ENTRIES.map((entry) => [entry, new Set(staticClosure(outputs, entry))]));
  for (const path of paths) {
    const shared = new Map<string, string[]>();
    for (const name of path.filter((name) => unmerged.has(name))) {
      const key = UNMERGED_ENTRIES.filter((entry) => loadedBy.get(entry)!.has(name)).join(" ");
      shared.set(key, [...(shared.get(key) ?? []), name]);
    }
    for (const [key, members] of shared) {
      if (members.length > 1) groups.push({ host: `shared-${groups.length}-${key.replaceAll(".mjs", "").replaceAll(" ", "-")}.mjs`, members });
    }
  }
  const merged = new Map<string, Group>();
  for (const group of groups) for (const name of group.members) merged.set(name, group);
  // Every other file that imports a merged chunk is rebuilt on its own, to import it from its group's file.
  for (const [name, output] of outputs) {
    if (merged.has(name)) continue;
    const importsMerged = output.imports.some((i) => i.kind === "import-statement" && merged.has(basename(i.path)) && merged.get(basename(i.path))!.root !== basename(i.path));
    if (importsMerged) groups.push({ host: name, root: name, members: [name] });
  }
  const groupOf = new Map<string, Group>();
  for (const group of groups) for (const name of group.members) groupOf.set(name, group);
  const index = new Map([...merged.keys()].map((name, i) => [name, i]));

  const written = new Map<string, string>();
  for (const group of groups) {
    let entry = group.members.map((member) => `import "./${member}";\n`).join("");
    for (const member of group.members) {
      const names = outputs.get(member)!.exports;
      if (names.length > 0) entry += `export { ${names.map((n) => `${n} as ${exportedAs(group, member, n, index)}`).join(", ")} } from "./${member}";\n`;
    }
    const hostPath = join(dir, group.host);
    const first = group.root ? readFileSync(hostPath, "utf8").split("\n", 1)[0]! : "";
    const links: Plugin = {
      name: "start-path-links",
      setup(b) {
        b.onResolve({ filter: /^\.\/[^/]+\.mjs$/ }, (args) => {
          const name = basename(args.path);
          const of = groupOf.get(name);
          if (args.namespace !== "merged-chunk" && of === group) return { path: resolve(dir, name) };
          // A root's file is its group's: its exports keep their names there. A lazily imported chunk stays lazy: a stub.
          if (args.namespace === "merged-chunk" || of === undefined || name === of.root || args.kind === "dynamic-import") return { path: args.path, external: true };
          return { path: name, namespace: "merged-chunk" };
        });
        b.onLoad({ filter: /.*/, namespace: "merged-chunk" }, (args) => ({
          contents: reexports(groupOf.get(args.path)!, args.path, outputs, index),
          loader: "js",
          resolveDir: dir,
        }));
      },
    };
    const result = await build({
      stdin: { contents: entry, resolveDir: dir, sourcefile: `${group.host}-members.js`, loader: "js" },
      // The members' own maps (their sourceMappingURL comments) are followed: the merged map points into src/.
      ...OUTPUT,
      ...(first.startsWith("#!") ? { banner: { js: first } } : {}),
      outfile: hostPath,
      write: false,
      plugins: [links],
    });
    for (const file of result.outputFiles) written.set(basename(file.path), file.text);
  }

  // A stub for every merged chunk (not a root) that another group imports lazily.
  const stubs = new Map<string, string>();
  for (const [importer, output] of outputs) {
    for (const i of output.imports) {
      const name = basename(i.path);
      const group = groupOf.get(name);
      if (i.external || !group || name === group.root || group === groupOf.get(importer)) continue;
      if (i.kind !== "dynamic-import" && groupOf.has(importer)) continue; // read from the group's file
      if (i.kind !== "dynamic-import") throw new Error(`bundle: ${importer} imports ${name}, merged into ${group.host}, and was not rebuilt`);
      stubs.set(name, reexports(group, name, outputs, index));
    }
  }
  const cliMode = statSync(join(dir, CLI_MAIN)).mode;
  for (const name of merged.keys()) {
    rmSync(join(dir, name));
    rmSync(join(dir, `${name}.map`), { force: true });
  }
  for (const [name, text] of written) writeFileSync(join(dir, name), text);
  chmodSync(join(dir, CLI_MAIN), cliMode);
  for (const [name, text] of stubs) {
    writeFileSync(join(dir, name), `${text}//# sourceMappingURL=${name}.map\n`);
    writeFileSync(join(dir, `${name}.map`), EMPTY_MAP);
  }
}

async function buildBundle(outDir: string): Promise<void> {
  const target = resolve(outDir);
  rmSync(target, { recursive: true, force: true });
  const result = await build({ ...COMMON, entryPoints: ENTRIES, outdir: target });
  await mergeStartPaths(target, result.metafile!);
  // The bin: the loader that runs the command line (cli-main.mjs) from its CommonJS twins. A build of its own:
  // it imports only Node's modules, and no chunk of the others (esbuild's helpers) should load before it.
  await build(LOADER_OUTPUT(join(target, BIN)));
  const files = readdirSync(target).filter((name) => name.endsWith(".mjs") && !NOT_TWINNED.has(name));
  await writeCommonJsTwins(target, files);
}

await buildBundle(process.argv[2] ?? "dist/bundle");
