/**
 * The diff job of edit_file / write_file (src/tools/files/file-diff.ts):
 * the lines both texts share at their ends are set aside before diffing,
 * and the result is the diff of the whole texts — the same text jsdiff
 * gives for them, and a patch that turns the old text into the new. A
 * change too large to diff is described instead.
 */
import { applyPatch, createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import { describe, expect, it } from "vitest";
import { computeFileChange, differingPart, MAX_DIFF_INPUT_CHARS } from "../../../src/tools/files/file-diff.js";

const fullDiff = (display: string, before: string | null, after: string) =>
  createTwoFilesPatch(before === null ? "/dev/null" : `a/${display}`, `b/${display}`, before ?? "", after, undefined, undefined, {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
  });

const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join("");

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
}

describe("computeFileChange", () => {
  const cases: Record<string, [string | null, string]> = {
    "one line in the middle": [lines(100), lines(100).replace("line 50\n", "LINE 50\n")],
    "the first line": [lines(20), lines(20).replace("line 1\n", "first\n")],
    "the last line, without a final line break": ["a\nb\nc\nd\ne", "a\nb\nc\nd\nE"],
    "a final line break added": ["a\nb\nc", "a\nb\nc\n"],
    "a final line break removed": ["a\nb\nc\n", "a\nb\nc"],
    "lines inserted at the start": [lines(10), `new 1\nnew 2\n${lines(10)}`],
    "lines appended": [lines(10), `${lines(10)}more\n`],
    "lines deleted near the end": [lines(30), lines(28)],
    "two changes far apart": [lines(200), lines(200).replace("line 10\n", "ten\n").replace("line 190\n", "one ninety\n")],
    "two changes close together (one hunk)": [lines(50), lines(50).replace("line 20\n", "x\n").replace("line 24\n", "y\n")],
    "a change inside a line shared at both ends": ["alpha beta gamma\n", "alpha BETA gamma\n"],
    "a new file": [null, "hello\nworld\n"],
    "emptied": ["a\nb\n", ""],
    "blank lines": ["\n\n\n\nx\n\n\n\n", "\n\n\n\ny\n\n\n\n"],
  };
  it.each(Object.entries(cases))("gives jsdiff's diff of the whole texts: %s", (_name, [before, after]) => {
    const change = computeFileChange({ display: "f.txt", before, after });
    expect(change.diff).toBe(fullDiff("f.txt", before, after));
    expect(applyPatch(before ?? "", change.diff)).toBe(after);
  });

  it("gives a patch that turns the old text into the new for 300 random edits", () => {
    const next = random(19);
    for (let trial = 0; trial < 300; trial++) {
      const source = Array.from({ length: 1 + Math.floor(next() * 40) }, () => ["x", "y", "z", "", "same"][Math.floor(next() * 5)]!);
      const edited = [...source];
      for (let edits = Math.floor(next() * 4); edits >= 0; edits--) {
        const at = Math.floor(next() * (edited.length + 1));
        const kind = next();
        if (kind < 0.33) edited.splice(at, 1);
        else if (kind < 0.66) edited.splice(at, 0, `new ${trial}`);
        else edited[at] = "changed";
      }
      const before = source.join("\n") + (next() < 0.5 ? "\n" : "");
      const after = edited.join("\n") + (next() < 0.5 ? "\n" : "");
      const change = computeFileChange({ display: "r.txt", before, after });
      expect(applyPatch(before, change.diff), `trial ${trial}: ${JSON.stringify({ before, after })}`).toBe(after);
    }
  });

  it("counts added and removed lines", () => {
    expect(computeFileChange({ display: "f", before: "a\nb\nc\n", after: "a\nB\nc\nd\n" })).toMatchObject({ added: 2, removed: 1 });
  });

  it("diffs one edit in an 8 MiB file by its few differing lines", () => {
    const big = lines(200_000, "some longer line of text, number");
    const after = big.replace("number 100000\n", "number one hundred thousand\n");
    const part = differingPart(big, after);
    expect(big.slice(part.start, part.oldEnd).split("\n")).toHaveLength(8); // 3 + 1 + 3 lines and the end
    expect(part.line).toBe(99_996);
    const change = computeFileChange({ display: "big.txt", before: big, after });
    expect(change).toMatchObject({ added: 1, removed: 1 });
    expect(change.diff).toContain("@@ -99997,7 +99997,7 @@");
  });

  it(`describes instead of diffing a change over ${MAX_DIFF_INPUT_CHARS} characters`, () => {
    const before = lines(120_000, "old");
    const after = lines(120_000, "new");
    expect(computeFileChange({ display: "huge.txt", before, after })).toEqual({
      diff: `[no diff: the changed part of huge.txt is too large to diff (${before.length + after.length} characters, over ${MAX_DIFF_INPUT_CHARS}); read the file to see it]\n`,
      added: null,
      removed: null,
    });
  });
});
