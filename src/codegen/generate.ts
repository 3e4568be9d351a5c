/**
 * `npm run gen`: write the generated files (OpenRPC document, JSON Schema,
 * TypeScript client types, errors and methods, the reference pages in
 * docs/reference/) and the generated blocks of
 * hand-written guides (docs/clients.md's method list, docs/configuration.md's
 * copy of --help) from protocol/.
 * `npm run gen:check`: regenerate into a temp dir and compare with the files
 * on disk (for a block: only the text between its markers); exit 1 naming
 * every stale file.
 *
 * Options: `--out-dir DIR` writes (or, with --check, compares) under DIR
 * instead of the repository root; tests use it on a scratch copy.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readBlock, spliceBlock } from "./blocks.js";
import { renderBlocks, renderOutputs } from "./outputs.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { values } = parseArgs({ options: { check: { type: "boolean" }, "out-dir": { type: "string" } } });
const outDir = resolve(values["out-dir"] ?? root);
const outputs = renderOutputs(root);
const blocks = renderBlocks();
const total = outputs.size + blocks.length;

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
  for (const block of blocks) {
    const target = join(outDir, block.path);
    const label = `${block.path} (generated block "${block.name}")`;
    writeFileSync(join(fresh, `${block.name}.block`), block.content);
    if (!existsSync(target)) {
      stale.push(`${label}: file missing`);
      continue;
    }
    const current = readBlock(readFileSync(target, "utf8"), block.name);
    if ("problem" in current) stale.push(`${label}: ${current.problem}`);
    else if (current.content !== block.content) stale.push(label);
  }
  if (stale.length > 0) {
    console.error(`gen:check: generated files are out of date:\n${stale.map((p) => `  ${p}`).join("\n")}`);
    console.error(`fresh output kept in ${fresh} for diffing`);
    console.error("run: npm run gen");
    process.exit(1);
  }
  rmSync(fresh, { recursive: true, force: true });
  console.log(`gen:check OK: ${total} generated files and blocks are up to date`);
} else {
  // Splice every block first: a file without its markers stops gen before anything is written.
  const spliced = blocks.map((block) => {
    const target = join(outDir, block.path);
    const before = readFileSync(target, "utf8"); // the hand-written file must exist: gen only owns the block
    return { block, target, before, after: spliceBlock(before, block.name, block.content) };
  });
  const written: string[] = [];
  for (const [path, content] of outputs) {
    const target = join(outDir, path);
    if (existsSync(target) && readFileSync(target, "utf8") === content) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    written.push(path);
  }
  for (const { block, target, before, after } of spliced) {
    if (after === before) continue;
    writeFileSync(target, after);
    written.push(`${block.path} (block "${block.name}")`);
  }
  console.log(written.length > 0 ? `gen: wrote ${written.join(", ")}` : `gen: ${total} files and blocks already up to date`);
}
