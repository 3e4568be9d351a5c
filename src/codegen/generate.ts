/**
 * `npm run gen`: write the generated files (OpenRPC document, JSON Schema,
 * TypeScript client) from protocol/.
 * `npm run gen:check`: regenerate into a temp dir and compare with the files
 * on disk; exit 1 naming every stale file.
 *
 * Options: `--out-dir DIR` writes (or, with --check, compares) under DIR
 * instead of the repository root; tests use it on a scratch copy.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { renderOutputs } from "./outputs.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { values } = parseArgs({ options: { check: { type: "boolean" }, "out-dir": { type: "string" } } });
const outDir = resolve(values["out-dir"] ?? root);
const outputs = renderOutputs(root);

if (values.check) {
  const fresh = mkdtempSync(join(tmpdir(), "agentwire-gen-"));
  const stale: string[] = [];
  for (const [path, content] of outputs) {
    mkdirSync(dirname(join(fresh, path)), { recursive: true });
    writeFileSync(join(fresh, path), content);
    const target = join(outDir, path);
    if (!existsSync(target)) stale.push(`${path} (missing)`);
    else if (!readFileSync(target).equals(readFileSync(join(fresh, path)))) stale.push(path);
  }
  if (stale.length > 0) {
    console.error(`gen:check: generated files are out of date:\n${stale.map((p) => `  ${p}`).join("\n")}`);
    console.error(`fresh output kept in ${fresh} for diffing`);
    console.error("run: npm run gen");
    process.exit(1);
  }
  rmSync(fresh, { recursive: true, force: true });
  console.log(`gen:check OK: ${outputs.size} generated files are up to date`);
} else {
  const written: string[] = [];
  for (const [path, content] of outputs) {
    const target = join(outDir, path);
    if (existsSync(target) && readFileSync(target, "utf8") === content) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    written.push(path);
  }
  console.log(written.length > 0 ? `gen: wrote ${written.join(", ")}` : `gen: ${outputs.size} files already up to date`);
}
