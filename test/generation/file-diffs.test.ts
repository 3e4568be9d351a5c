/**
 * Diffs before approval and per generation, end to end: the scripted fake
 * model proposes write_file / edit_file calls through the real openai SDK,
 * a client on an in-memory link sees what each would change on tool_pending
 * (nothing written yet), decides over the protocol, and follows the net
 * change of the generation (generation_diff_updated, conversation.diff —
 * also from a second server on the same data dir).
 */
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newConversation, startAgentFixture, useAgentFixture } from "../harness/agent-fixture.js";

let base: string;
let ws: string;

const fx = useAgentFixture();

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "agentwire-file-diffs-")));
  ws = join(base, "ws");
  await mkdir(ws);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, args: JSON.stringify(args) });

it("a pending edit_file carries its diff, nothing is written until confirmed, and tool_completed's diff is the same text", async () => {
  await writeFile(join(ws, "greet.py"), 'def greet():\n    print("hello")\n');
  const args = { path: "greet.py", old_string: 'print("hello")', new_string: 'print("hello, world")' };
  fx.fake.enqueue({ kind: "reply", toolCalls: [call("call_edit", "edit_file", args)] }, { kind: "reply", text: ["Done."] });
  const { id, events } = await newConversation(fx.client, { workspace: ws });
  const { generationId } = await fx.client.step({ conversationId: id });
  const pending = (await events.waitForMethod("tool_pending")).params;

  const expectedDiff = '--- a/greet.py\n+++ b/greet.py\n@@ -1,2 +1,2 @@\n def greet():\n-    print("hello")\n+    print("hello, world")\n';
  expect(pending.changes).toEqual([{ path: "greet.py", kind: "modify", diff: expectedDiff }]);
  expect(await readFile(join(ws, "greet.py"), "utf8")).toBe('def greet():\n    print("hello")\n');
  // A client that (re)connects now finds the same change in the state.
  const { state } = await fx.client.conversation.get({ conversationId: id });
  expect(state.pendingTools).toEqual([expect.objectContaining({ toolCallId: "call_edit", changes: pending.changes })]);

  await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_edit", action: "confirm" });
  expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
  const completed = events.of("tool_completed")[0]!.record;
  expect(completed.diff).toBe(pending.changes[0].diff);
  expect(events.of("tool_executing")[0]).not.toHaveProperty("changes");
});

it("write_file previews a new file as add, with the diff its write then reports", async () => {
  fx.fake.enqueue(
    { kind: "reply", toolCalls: [call("call_new", "write_file", { path: "notes/todo.md", content: "- one\n- two\n" })] },
    { kind: "reply", text: ["Written."] },
  );
  const { id, events } = await newConversation(fx.client, { workspace: ws });
  const { generationId } = await fx.client.step({ conversationId: id });
  const pending = (await events.waitForMethod("tool_pending")).params;
  expect(pending.changes).toEqual([{ path: "notes/todo.md", kind: "add", diff: "--- /dev/null\n+++ b/notes/todo.md\n@@ -0,0 +1,2 @@\n+- one\n+- two\n" }]);
  await expect(readFile(join(ws, "notes/todo.md"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
  await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_new", action: "confirm" });
  await events.waitForEnd(generationId);
  expect(events.of("tool_completed")[0]!.record.diff).toBe(pending.changes[0].diff);
});

it("an ambiguous or missing old_string is reported while pending, and confirming it fails with those words", async () => {
  await writeFile(join(ws, "twice.txt"), "alpha\nbeta\nalpha\n");
  fx.fake.enqueue(
    {
      kind: "reply",
      toolCalls: [
        call("call_twice", "edit_file", { path: "twice.txt", old_string: "alpha", new_string: "gamma" }),
        call("call_gone", "edit_file", { path: "twice.txt", old_string: "delta", new_string: "gamma" }),
      ],
    },
    { kind: "reply", text: ["Both failed."] },
  );
  const { id, events } = await newConversation(fx.client, { workspace: ws });
  const { generationId } = await fx.client.step({ conversationId: id });
  await events.waitForCount("tool_pending", 2);
  const [twice, gone] = events.of("tool_pending");
  expect(twice!.changes).toEqual([
    {
      path: "twice.txt",
      kind: "modify",
      diff: "",
      problem: expect.stringContaining("old_string occurs 2 times in twice.txt"),
    },
  ]);
  expect(gone!.changes).toEqual([{ path: "twice.txt", kind: "modify", diff: "", problem: expect.stringContaining("old_string was not found in twice.txt") }]);

  await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_twice", action: "confirm" });
  await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_gone", action: "confirm" });
  await events.waitForEnd(generationId);
  const failed = events.of("tool_failed").map((e) => e.record.result);
  expect(failed).toEqual([`Error: ${twice!.changes![0]!.problem}`, `Error: ${gone!.changes![0]!.problem}`]);
  expect(await readFile(join(ws, "twice.txt"), "utf8")).toBe("alpha\nbeta\nalpha\n");
});

it("an edit through tool.confirm is previewed again on tool_executing, and that is the diff the write produces", async () => {
  await writeFile(join(ws, "colour.txt"), "red\ngreen\nblue\n");
  fx.fake.enqueue(
    { kind: "reply", toolCalls: [call("call_colour", "edit_file", { path: "colour.txt", old_string: "green", new_string: "lime" })] },
    { kind: "reply", text: ["Edited."] },
  );
  const { id, events } = await newConversation(fx.client, { workspace: ws });
  const { generationId } = await fx.client.step({ conversationId: id });
  const pending = (await events.waitForMethod("tool_pending")).params;
  expect(pending.changes[0].diff).toContain("+lime\n");

  const edited = { path: "colour.txt", old_string: "blue", new_string: "navy" };
  await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_colour", action: "edit", arguments: edited });
  await events.waitForEnd(generationId);
  const executing = events.of("tool_executing")[0]!;
  expect(executing).toMatchObject({ edited: true, arguments: edited });
  expect(executing.changes).toEqual([
    { path: "colour.txt", kind: "modify", diff: "--- a/colour.txt\n+++ b/colour.txt\n@@ -1,3 +1,3 @@\n red\n green\n-blue\n+navy\n" },
  ]);
  expect(events.of("tool_completed")[0]!.record.diff).toBe(executing.changes![0]!.diff);
  expect(await readFile(join(ws, "colour.txt"), "utf8")).toBe("red\ngreen\nnavy\n");
});

it("two calls of one round editing one file: the second is previewed again on tool_executing, after the first wrote", async () => {
  await writeFile(join(ws, "pair.txt"), "one\ntwo\n");
  fx.fake.enqueue(
    {
      kind: "reply",
      toolCalls: [
        call("call_p1", "edit_file", { path: "pair.txt", old_string: "one", new_string: "ONE" }),
        call("call_p2", "edit_file", { path: "pair.txt", old_string: "two", new_string: "TWO" }),
      ],
    },
    { kind: "reply", text: ["Both."] },
  );
  const { id, events } = await newConversation(fx.client, { workspace: ws });
  const { generationId } = await fx.client.step({ conversationId: id });
  await events.waitForCount("tool_pending", 2);
  const second = events.of("tool_pending")[1]!;
  expect(second.changes![0]!.diff).toBe("--- a/pair.txt\n+++ b/pair.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
  await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_p1", action: "confirm" });
  await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_p2", action: "confirm" });
  await events.waitForEnd(generationId);
  const [first, again] = events.of("tool_executing");
  expect(first).not.toHaveProperty("changes");
  const now = "--- a/pair.txt\n+++ b/pair.txt\n@@ -1,2 +1,2 @@\n ONE\n-two\n+TWO\n";
  expect(again!.changes).toEqual([{ path: "pair.txt", kind: "modify", diff: now }]);
  expect(events.of("tool_completed")[1]!.record.diff).toBe(now);
});

it("the generation's diff nets two edits of one file, drops a file put back as it was, and conversation.diff answers it — also after a restart", async () => {
  await writeFile(join(ws, "app.ts"), "const a = 1;\nconst b = 2;\nconst c = 3;\n");
  await writeFile(join(ws, "keep.ts"), "export {};\n");
  fx.fake.enqueue(
    {
      kind: "reply",
      toolCalls: [
        call("call_1", "edit_file", { path: "app.ts", old_string: "const a = 1;", new_string: "const a = 10;" }),
        call("call_2", "edit_file", { path: "keep.ts", old_string: "export {};", new_string: "export const x = 1;" }),
        call("call_3", "edit_file", { path: "app.ts", old_string: "const c = 3;", new_string: "const c = 30;" }),
        call("call_4", "write_file", { path: "keep.ts", content: "export {};\n" }),
      ],
    },
    { kind: "reply", text: ["All done."] },
  );
  const { id, events } = await newConversation(fx.client, { workspace: ws });
  const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
  await events.waitForEnd(generationId);

  const netApp = {
    path: "app.ts",
    kind: "modify",
    diff: "--- a/app.ts\n+++ b/app.ts\n@@ -1,3 +1,3 @@\n-const a = 1;\n+const a = 10;\n const b = 2;\n-const c = 3;\n+const c = 30;\n",
  };
  const updates = events.of("generation_diff_updated");
  expect(updates.map((u) => u.changes.map((c) => c.path))).toEqual([["app.ts"], ["app.ts", "keep.ts"], ["app.ts", "keep.ts"], ["app.ts"]]);
  expect(updates.every((u) => u.generationId === generationId)).toBe(true);
  // Each update follows the tool_completed of the call that changed the file.
  const methods = events.methods().filter((m) => m === "tool_completed" || m === "generation_diff_updated");
  expect(methods).toEqual(Array.from({ length: 4 }, () => ["tool_completed", "generation_diff_updated"]).flat());
  expect(updates.at(-1)!.changes).toEqual([netApp]);

  expect(await fx.client.conversation.diff({ conversationId: id })).toEqual({ generationId, changes: [netApp] });
  expect(await fx.client.conversation.diff({ conversationId: id, generationId })).toEqual({ generationId, changes: [netApp] });
  expect(await fx.client.conversation.diff({ conversationId: id, generationId: "g_unknown" })).toEqual({ generationId: "g_unknown", changes: [] });

  // A later generation that changes nothing has an empty diff; the earlier one is still there by id.
  fx.fake.enqueue({ kind: "reply", text: ["Nothing to change."] });
  const next = await fx.client.step({ conversationId: id });
  await events.waitForEnd(next.generationId);
  expect(await fx.client.conversation.diff({ conversationId: id })).toEqual({ generationId: next.generationId, changes: [] });

  // The same answer from another server on the same data dir (the fixture's close removes it): read from the stored records.
  const { dataDir } = fx.server;
  await fx.server.stop();
  const second = await startAgentFixture({ config: { server: { dataDir } } });
  try {
    expect(await second.client.conversation.diff({ conversationId: id, generationId })).toEqual({ generationId, changes: [netApp] });
  } finally {
    await second.close();
  }
});
