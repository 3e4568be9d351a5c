/**
 * The file tools end to end: the scripted fake model calls them through the
 * real openai SDK, a client confirms over the protocol, and the diff reaches
 * the client on tool_completed and the stored record while the model's next
 * request carries the result. A path outside the workspace fails the same
 * way the model would see it, and nothing is written.
 */
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../../harness/agent-fixture.js";

const fx = useAgentFixture();

let base: string;
let ws: string;

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "agentwire-file-agent-")));
  ws = join(base, "ws");
  await mkdir(ws);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

it("tools.list offers the file tools with their annotations", async () => {
  const { tools } = await fx.client.tools.list();
  const byName = new Map(tools.map((t) => [t.name, t]));
  expect(tools.map((t) => t.name)).toEqual(["shell", "read_file", "list_files", "search_files", "write_file", "edit_file", "update_plan", "ask_user", "load_skill", "spawn_agent"]);
  expect(byName.get("read_file")).toMatchObject({ source: "builtin", annotations: { readOnlyHint: true } });
  expect(byName.get("write_file")).toMatchObject({ annotations: { readOnlyHint: false, destructiveHint: true } });
  expect(byName.get("edit_file")!.parameters).toMatchObject({ required: ["path", "old_string", "new_string"], additionalProperties: false });
});

it("edit_file confirmed over the protocol: the diff is on tool_completed and the record, the file changed, the model got the result", async () => {
  await writeFile(join(ws, "greet.py"), 'def greet():\n    print("hello")\n');
  const args = { path: "greet.py", old_string: 'print("hello")', new_string: 'print("hello, world")' };
  fx.fake.enqueue(
    { kind: "reply", text: ["Editing."], toolCalls: [{ id: "call_edit", name: "edit_file", args: JSON.stringify(args) }] },
    { kind: "reply", text: ["Done."] },
  );
  const { id, events } = await newConversation(fx.client, { workspace: ws });
  // The model was offered the file tools.
  const { generationId } = await fx.client.step({ conversationId: id });
  const pending = await events.waitForMethod("tool_pending");
  expect(pending.params).toMatchObject({ toolCallId: "call_edit", toolName: "edit_file", arguments: args });
  // How a client shows it without knowing edit_file: its kind, a title and the file it touches (workspace-relative).
  expect(pending.params).toMatchObject({ kind: "edit", title: "Edit greet.py", locations: [{ path: "greet.py" }] });
  expect(fx.fake.requests[0]!.tools!.map((t: { function: { name: string } }) => t.function.name)).toContain("edit_file");
  // Nothing changes before the user confirms.
  expect(await readFile(join(ws, "greet.py"), "utf8")).toBe('def greet():\n    print("hello")\n');

  await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_edit", action: "confirm" });
  expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");

  const expectedDiff = '--- a/greet.py\n+++ b/greet.py\n@@ -1,2 +1,2 @@\n def greet():\n-    print("hello")\n+    print("hello, world")\n';
  const completed = events.of("tool_completed")[0]!.record;
  expect(completed).toMatchObject({ toolName: "edit_file", status: "completed", success: true, diff: expectedDiff });
  expect(completed.result).toContain(expectedDiff);
  expect(await readFile(join(ws, "greet.py"), "utf8")).toBe('def greet():\n    print("hello, world")\n');

  const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
  expect(records!.find((r) => r.type === "tool_call")).toMatchObject({ diff: expectedDiff, status: "completed" });

  const toolMessage = fx.fake.requests[1]!.messages.at(-1);
  expect(toolMessage).toMatchObject({ role: "tool", tool_call_id: "call_edit" });
  expect(toolMessage.content).toContain("Edited greet.py: replaced 1 occurrence");
  expect(toolMessage.content).toContain('+    print("hello, world")');
});

it("a write outside the workspace fails as tool_failed, the model is told why, and nothing is written", async () => {
  const outside = join(base, "escaped.txt");
  fx.fake.enqueue(
    { kind: "reply", toolCalls: [{ id: "call_out", name: "write_file", args: JSON.stringify({ path: "../escaped.txt", content: "pwned" }) }] },
    { kind: "reply", text: ["Understood."] },
  );
  const { id, events } = await newConversation(fx.client, { workspace: ws });
  const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
  await events.waitForEnd(generationId);

  const failed = events.of("tool_failed")[0]!.record;
  expect(failed).toMatchObject({ toolName: "write_file", status: "failed", success: false });
  expect(failed.result).toMatch(/"\.\.\/escaped\.txt" is outside the conversation's workspace/);
  expect(failed.diff).toBeUndefined();
  expect(events.of("tool_completed")).toEqual([]);
  await expect(readFile(outside)).rejects.toMatchObject({ code: "ENOENT" });
  expect(await readdir(base)).toEqual(["ws"]);
  expect(fx.fake.requests[1]!.messages.at(-1).content).toMatch(/outside the conversation's workspace/);
});
