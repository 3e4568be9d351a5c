/**
 * What `npm run gen` and `npm run gen:check` do with what outputs.ts
 * rendered, as a function: generate.ts runs it for the command line, and the
 * tests run it in their own process on scratch trees (a child process per
 * run started tsx and rendered everything again: about two seconds of a
 * core each, ten runs per `npm test`).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { readBlock, spliceBlock, type GeneratedBlock } from "./blocks.js";

export interface GenRun {
  /** The exit status the command ends with: 0, or 1 (stale files under check; a block gen cannot place). */
  status: 0 | 1;
  /** What it prints to stdout and stderr. */
  stdout: string;
  stderr: string;
}

/**
 * With `check`: regenerate into a temp dir and compare with the files under
 * `outDir` (for a block: only the text between its markers), naming every
 * stale one. Without: write what differs.
 */
export function runGen(check: boolean, outDir: string, outputs: ReadonlyMap<string, string>, blocks: readonly GeneratedBlock[]): GenRun {
  const total = outputs.size + blocks.length;
  if (check) {
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
      const stderr =
        `gen:check: generated files are out of date:\n${stale.map((p) => `  ${p}`).join("\n")}\n` + `fresh output kept in ${fresh} for diffing\n` + "run: npm run gen\n";
      return { status: 1, stdout: "", stderr };
    }
    rmSync(fresh, { recursive: true, force: true });
    return { status: 0, stdout: `gen:check OK: ${total} generated files and blocks are up to date\n`, stderr: "" };
  }
  // Splice every block first: a file without its markers stops gen before anything is written.
  let spliced;
  try {
    spliced = blocks.map((block) => {
      const target = join(outDir, block.path);
      const before = readFileSync(target, "utf8"); // the hand-written file must exist: gen only owns the block
      return { block, target, before, after: spliceBlock(before, block.name, block.content) };
    });
  } catch (error) {
    return { status: 1, stdout: "", stderr: `gen: ${(error as Error).message}\n` };
  }
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
  return { status: 0, stdout: `${written.length > 0 ? `gen: wrote ${written.join(", ")}` : `gen: ${total} files and blocks already up to date`}\n`, stderr: "" };
}
