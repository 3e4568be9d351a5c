/**
 * The net change of a generation's files (src/generation/generation-diff.ts)
 * from the changes its tools report: each file against its first-seen
 * content, entries in the order first changed, a file created then removed
 * netting to nothing; and the same list read back from records.
 */
import { expect, it } from "vitest";
import type { ConversationRecord, ToolCallRecord } from "../../protocol/index.js";
import { GenerationDiff, readGenerationDiff } from "../../src/generation/generation-diff.js";

const signal = new AbortController().signal;

it("nets each file against its content before the generation, in the order first changed", async () => {
  const diff = new GenerationDiff();
  await diff.add({ path: "b.txt", before: "1\n", after: "2\n" }, signal);
  await diff.add({ path: "a.txt", before: null, after: "new\n" }, signal);
  const last = await diff.add({ path: "b.txt", before: "2\n", after: "3\n" }, signal);
  expect(last).toEqual({ path: "b.txt", change: { path: "b.txt", kind: "modify", diff: "--- a/b.txt\n+++ b/b.txt\n@@ -1,1 +1,1 @@\n-1\n+3\n" } });
  expect(diff.changes()).toEqual([
    last.change,
    { path: "a.txt", kind: "add", diff: "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,1 @@\n+new\n" },
  ]);
});

it("a file created then deleted, or edited back, nets to nothing; an unknown old content gets a note", async () => {
  const diff = new GenerationDiff();
  await diff.add({ path: "tmp.txt", before: null, after: "scratch\n" }, signal);
  expect(await diff.add({ path: "tmp.txt", before: "scratch\n", after: null }, signal)).toEqual({ path: "tmp.txt", change: null });
  await diff.add({ path: "x.txt", before: "x\n", after: "y\n" }, signal);
  await diff.add({ path: "x.txt", before: "y\n", after: "x\n" }, signal);
  await diff.add({ path: "blob", before: undefined, after: "text\n" }, signal);
  expect(diff.changes()).toEqual([{ path: "blob", kind: "modify", diff: expect.stringMatching(/^\[no net diff: the old content of blob was not text/) }]);
});

it("readGenerationDiff: the last netChange per file of the asked generation (default: the latest), stopping before an earlier one", async () => {
  const change = (path: string, diff: string) => ({ path, kind: "modify" as const, diff });
  const call = (generationId: string, path: string, diff: string | null): ToolCallRecord => ({
    type: "tool_call",
    id: `r_${generationId}_${path}_${diff}`,
    toolCallId: "call",
    toolName: "edit_file",
    arguments: {},
    result: "ok",
    success: true,
    status: "completed",
    generationId,
    timestamp: "2026-01-01T00:00:00.000Z",
    netChange: { path, change: diff === null ? null : change(path, diff) },
  });
  const user = { type: "message", id: "r_u", role: "user", content: "go", timestamp: "2026-01-01T00:00:00.000Z" } as ConversationRecord;
  const records: ConversationRecord[] = [call("g1", "a", "a1"), user, call("g2", "a", "a2"), call("g2", "b", "b2"), call("g2", "a", "a3"), call("g2", "b", null), user];
  let reads = 0;
  const source = {
    recordCount: records.length,
    async readRecords(from: number, to: number) {
      reads++;
      return records.slice(from, to);
    },
  };
  expect(await readGenerationDiff(source, undefined)).toEqual({ generationId: "g2", changes: [change("a", "a3")] });
  expect(await readGenerationDiff(source, "g1")).toEqual({ generationId: "g1", changes: [change("a", "a1")] });
  expect(await readGenerationDiff(source, undefined, "g3")).toEqual({ generationId: "g3", changes: [] });
  expect(await readGenerationDiff({ recordCount: 0, readRecords: async () => [] }, undefined)).toEqual({ generationId: null, changes: [] });
  expect(reads).toBeGreaterThan(0);
});
