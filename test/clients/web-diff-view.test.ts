/**
 * The web client's unified-diff parser (clients/web/diff-view.ts) on the
 * shapes the browser test does not produce: several files in git's form, a
 * removed line that itself begins with "--", a deleted file, and the
 * server's notes. Pure functions: no browser needed.
 */
import { describe, expect, it } from "vitest";
import { parseUnifiedDiff } from "../../clients/web/diff-view.js";
import { computeFileChange } from "../../src/tools/files/file-diff.js";

describe("parseUnifiedDiff", () => {
  it("reads the server's diff of an edit and of a new file (what write_file and edit_file put on the record)", () => {
    const edit = computeFileChange({ display: "src/a.ts", before: "one\ntwo\nthree\n", after: "one\nTWO\nthree\nfour\n" }).diff;
    expect(parseUnifiedDiff(edit)).toEqual({
      files: [
        {
          path: "src/a.ts",
          status: "modified",
          added: 2,
          removed: 1,
          lines: [
            { kind: "hunk", text: "@@ -1,3 +1,4 @@" },
            { kind: "context", text: " one" },
            { kind: "del", text: "-two" },
            { kind: "add", text: "+TWO" },
            { kind: "context", text: " three" },
            { kind: "add", text: "+four" },
          ],
        },
      ],
      notes: [],
    });
    const created = parseUnifiedDiff(computeFileChange({ display: "NEW.md", before: null, after: "hi\n" }).diff);
    expect(created.files).toMatchObject([{ path: "NEW.md", status: "added", added: 1, removed: 0 }]);
  });

  it("splits git's multi-file form by its headers, and a removed '-- comment' line inside a hunk stays a line", () => {
    const text = [
      "diff --git a/q.sql b/q.sql",
      "index 111..222 100644",
      "--- a/q.sql",
      "+++ b/q.sql",
      "@@ -1,2 +1,1 @@",
      "--- a comment removed",
      " select 1;",
      "diff --git a/old.txt b/old.txt",
      "deleted file mode 100644",
      "--- a/old.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-gone",
      "\\ No newline at end of file",
      "",
    ].join("\n");
    const { files, notes } = parseUnifiedDiff(text);
    expect(notes).toEqual([]);
    expect(files.map((f) => [f.path, f.status, f.added, f.removed])).toEqual([
      ["q.sql", "modified", 0, 1],
      ["old.txt", "removed", 0, 1],
    ]);
    expect(files[0].lines.map((l) => l.kind)).toEqual(["meta", "hunk", "del", "context"]);
    expect(files[0].lines[2].text).toBe("--- a comment removed");
    expect(files[1].lines.map((l) => l.kind)).toEqual(["meta", "hunk", "del", "meta"]);
  });

  it("keeps the server's notes (no diff computed, diff cut) as notes", () => {
    expect(parseUnifiedDiff("[no diff: the changed part of big.bin is too large to diff]\n")).toEqual({
      files: [],
      notes: ["[no diff: the changed part of big.bin is too large to diff]"],
    });
    const cut = parseUnifiedDiff("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n[… diff cut: 10 more bytes; read the file to see the rest]\n");
    expect(cut.files[0]).toMatchObject({ path: "x", added: 1, removed: 1 });
    expect(cut.notes).toEqual(["[… diff cut: 10 more bytes; read the file to see the rest]"]);
  });
});
