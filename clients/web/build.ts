/**
 * Builds the web client into one directory: index.html, app.js (app.ts and
 * everything it imports, the generated client and the markdown library
 * included) and app.css. `npm run bundle:web` runs it for dist/web; the
 * browser test runs it for a directory of its own.
 *
 * The new files are written next to the target and swapped in by renames,
 * so a server reading the directory while a build runs (another test's
 * `npm run build`, say) sees the old client or the new one, never half of one.
 */
import { build } from "esbuild";
import { copyFileSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export interface WebBuild {
  /** Bytes of each file written. */
  sizes: Record<string, number>;
}

export async function buildWebClient(outDir: string): Promise<WebBuild> {
  const target = resolve(outDir);
  const staging = `${target}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(staging, { recursive: true });
  try {
    const result = await build({
      entryPoints: [join(here, "app.ts")],
      bundle: true,
      minify: true,
      format: "esm",
      target: "es2022",
      platform: "browser",
      outfile: join(staging, "app.js"),
      metafile: true,
      logLevel: "warning",
    });
    copyFileSync(join(here, "index.html"), join(staging, "index.html"));
    const sizes: Record<string, number> = {};
    for (const [file, output] of Object.entries(result.metafile.outputs)) sizes[file.split("/").pop()!] = output.bytes;
    const old = `${target}.old-${process.pid}-${Date.now()}`;
    try {
      renameSync(target, old);
    } catch {
      // no previous build
    }
    renameSync(staging, target);
    rmSync(old, { recursive: true, force: true });
    return { sizes };
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2] ?? "dist/web";
  const { sizes } = await buildWebClient(outDir);
  if (process.argv.includes("--sizes")) console.log(`${outDir}: ${JSON.stringify(sizes)}`);
}
