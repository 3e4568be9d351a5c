/**
 * state.pendingTools shows a waiting call as its tool_pending did — kind,
 * title, locations and the change it would make — to a client that
 * subscribes or reloads while it waits, and after a restart (the display is
 * kept with the stored call; the change is computed again when the call is
 * offered again).
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolCallRecord } from "../../protocol/index.js";
import { pendingToolOf } from "../../src/sessions/pending-tool.js";
import { newConversation, startAgentFixture, useAgentFixture, type AgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";

const EDIT = { path: "src/greet.py", old_string: 'print("hello")', new_string: 'print("hello, world")' };
const editCall = { kind: "reply" as const, toolCalls: [{ id: "call_edit", name: "edit_file", args: JSON.stringify(EDIT) }] };

let base: string;
let ws: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "agentwire-pending-display-")));
  ws = join(base, "ws");
  await mkdir(join(ws, "src"), { recursive: true });
  await writeFile(join(ws, "src/greet.py"), 'def greet():\n    print("hello")\n');
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** The fields of a tool_pending a pending call must show again. */
function shown(pending: Record<string, unknown>) {
  const { toolCallId, toolName, arguments: args, kind, title, locations, rememberAs, changes } = pending;
  return { toolCallId, toolName, arguments: args, kind, title, locations, rememberAs, changes };
}

describe("a client arriving while an edit_file waits", () => {
  const fx = useAgentFixture();

  it("finds kind, title, locations and changes in the subscribe snapshot and conversation.get, as tool_pending carried them", async () => {
    fx.fake.enqueue(editCall, { kind: "reply", text: ["Done."] });
    const { id, events } = await newConversation(fx.client, { workspace: ws });
    const { generationId } = await fx.client.step({ conversationId: id });
    const pending = (await events.waitForMethod("tool_pending")).params;
    expect(pending).toMatchObject({ kind: "edit", title: "Edit src/greet.py", locations: [{ path: "src/greet.py" }] });
    expect(pending.changes).toHaveLength(1);

    const second = await fx.connect();
    const snapshot = await second.conversation.subscribe({ conversationId: id });
    expect(snapshot.state.pendingTools).toEqual([shown(pending)]);
    const got = await second.conversation.get({ conversationId: id });
    expect(got.state.pendingTools).toEqual([shown(pending)]);

    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_edit", action: "confirm" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
  });
});

describe("after a restart", () => {
  let dataDir: string;
  const open: AgentFixture[] = [];
  beforeEach(async () => {
    dataDir = join(base, "data");
  });
  afterEach(async () => {
    for (const fx of open.splice(0)) await fx.close();
  });

  it("the stored pending call shows the display it was offered with, and offered again it carries it with its change", async () => {
    const fx1 = await startAgentFixture({ config: { server: { dataDir } } });
    open.push(fx1);
    fx1.fake.enqueue(editCall);
    const { id, events } = await newConversation(fx1.client, { workspace: ws });
    await fx1.client.step({ conversationId: id });
    const pending = (await events.waitForMethod("tool_pending")).params;
    await fx1.close();
    open.pop();

    const fx2 = await startAgentFixture({ config: { server: { dataDir } } });
    open.push(fx2);
    const { changes: _changes, ...display } = shown(pending);
    // The change is not kept: it is computed again, against the files as they are then, when the call is offered again.
    expect((await fx2.client.conversation.get({ conversationId: id })).state.pendingTools).toEqual([display]);
    const recorder = new EventRecorder(fx2.client, id);
    const snapshot = await fx2.client.conversation.subscribe({ conversationId: id });
    expect(snapshot.state.pendingTools).toEqual([display]);

    fx2.fake.enqueue({ kind: "reply", text: ["Done."] });
    await fx2.client.tool.confirm({ conversationId: id, toolCallId: "call_edit", action: "confirm" });
    const again = (await recorder.waitForMethod("tool_pending")).params;
    expect(shown(again)).toEqual(shown(pending));
    const completed = (await recorder.waitForMethod("tool_completed")).params.record;
    expect(completed).toMatchObject({ kind: "edit", title: "Edit src/greet.py", locations: [{ path: "src/greet.py" }] });
    expect(completed.diff).toBe(pending.changes[0].diff);
  });
});

it("a pending call stored before records kept their display shows as its tool's name, kind other", () => {
  const record: ToolCallRecord = {
    type: "tool_call",
    id: "r_1",
    toolCallId: "call_old",
    toolName: "edit_file",
    arguments: { path: "a.txt" },
    result: null,
    success: null,
    status: "pending",
    timestamp: "2026-01-01T00:00:00.000Z",
  };
  expect(pendingToolOf(record)).toEqual({ toolCallId: "call_old", toolName: "edit_file", arguments: { path: "a.txt" }, kind: "other", title: "edit_file", locations: [], rememberAs: { tool: "edit_file" } });
});
