/**
 * conversation.rewind / unrewind end to end, in a real temp workspace: the
 * scripted fake model makes write_file / edit_file calls through the real
 * openai SDK, the file tools keep their checkpoints in the store, and a
 * client takes the turn back (records and files), puts it back, and goes on.
 * On the embedded store and on PostgreSQL, across a restart.
 */
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newConversation, startAgentFixture, type AgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";

const pgUp = await postgresReachable("conversation-rewind.test.ts");

let base: string;
let counter = 0;
const fixtures: AgentFixture[] = [];

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "agentwire-rewind-")));
});

afterEach(async () => {
  for (const fx of fixtures.splice(0)) await fx.close().catch(() => undefined);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function freshDir(name: string): Promise<string> {
  const dir = join(base, `${name}-${++counter}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function start(config: Parameters<typeof startAgentFixture>[0] = {}): Promise<AgentFixture> {
  const fx = await startAgentFixture(config);
  fixtures.push(fx);
  return fx;
}

const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, args: JSON.stringify(args) });
const read = (ws: string, path: string) => readFile(join(ws, path), "utf8");
const exists = (ws: string, path: string) =>
  readFile(join(ws, path)).then(
    () => true,
    () => false,
  );

/** A generation that edits a.txt and b.txt and creates new.txt (auto-confirmed); returns the conversation and the first assistant record's id. */
async function editingTurn(fx: AgentFixture, ws: string): Promise<{ id: string; events: EventRecorder; assistantId: string }> {
  await writeFile(join(ws, "a.txt"), "one\n");
  await writeFile(join(ws, "b.txt"), "x\n");
  fx.fake.enqueue(
    {
      kind: "reply",
      text: ["Editing."],
      toolCalls: [
        call("call_a", "edit_file", { path: "a.txt", old_string: "one", new_string: "two" }),
        call("call_b", "edit_file", { path: "b.txt", old_string: "x", new_string: "y" }),
      ],
    },
    { kind: "reply", toolCalls: [call("call_new", "write_file", { path: "new.txt", content: "fresh\n" })] },
    { kind: "reply", text: ["Done."] },
  );
  const { id, events } = await newConversation(fx.client, { workspace: ws }, "change the files");
  const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
  expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
  expect([await read(ws, "a.txt"), await read(ws, "b.txt"), await read(ws, "new.txt")]).toEqual(["two\n", "y\n", "fresh\n"]);
  const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
  const assistant = records!.find((r) => r.type === "message" && r.role === "assistant")!;
  return { id, events, assistantId: assistant.id };
}

function rewindScenario(storeConfig: () => Promise<{ server: Record<string, unknown> }>) {
  return async () => {
    const ws = await freshDir("ws");
    const config = await storeConfig();
    const first = await start({ config });
    const { id, assistantId } = await editingTurn(first, ws);
    const before = (await first.client.conversation.get({ conversationId: id })).conversation.recordCount;
    // A restart: the checkpoints come back from the store.
    await first.close();
    const fx = await start({ config });
    const events = new EventRecorder(fx.client, id);
    await fx.client.conversation.subscribe({ conversationId: id });

    const seqBefore = (await fx.client.conversation.get({ conversationId: id })).state.seq;
    await writeFile(join(ws, "b.txt"), "by hand\n");
    const rewound = await fx.client.conversation.rewind({ conversationId: id, beforeRecordId: assistantId, restoreFiles: true });
    expect(rewound).toEqual({
      fromPosition: 1,
      recordsRemoved: before - 1,
      filesRestored: [
        { path: "a.txt", action: "restored" },
        { path: "new.txt", action: "removed" },
      ],
      filesNotRestored: [{ path: "b.txt", reason: "changed_on_disk", message: expect.stringContaining("b.txt changed on disk") }],
      unrestorableCalls: [],
    });
    expect(await read(ws, "a.txt")).toBe("one\n");
    expect(await exists(ws, "new.txt")).toBe(false);
    expect(await read(ws, "b.txt")).toBe("by hand\n");
    const afterRewind = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(afterRewind.records!.map((r) => r.type === "message" && r.content)).toEqual(["change the files"]);
    expect(afterRewind.conversation.recordCount).toBe(1);
    const notice = await events.waitForMethod("conversation_rewound");
    expect(notice.params).toMatchObject({ action: "rewind", fromPosition: 1, recordCount: 1 });

    // Unrewind: the records and the files come back.
    const redone = await fx.client.conversation.unrewind({ conversationId: id });
    expect(redone).toMatchObject({ fromPosition: 1, recordsRestored: before - 1 });
    expect(await read(ws, "a.txt")).toBe("two\n");
    expect(await read(ws, "new.txt")).toBe("fresh\n");
    expect((await fx.client.conversation.get({ conversationId: id })).conversation.recordCount).toBe(before);
    const rewoundEvents = events.of("conversation_rewound");
    expect(rewoundEvents.map((e) => e.action)).toEqual(["rewind", "unrewind"]);
    expect(rewoundEvents[1]!.seq).toBeGreaterThan(rewoundEvents[0]!.seq);
    // A client catching up from before the rewind gets both, replayed in order.
    const late = await fx.connect();
    const replayed = new EventRecorder(late, id);
    await late.conversation.subscribe({ conversationId: id, afterSeq: seqBefore });
    expect(replayed.of("conversation_rewound").map((e) => [e.action, e.seq])).toEqual(rewoundEvents.map((e) => [e.action, e.seq]));
    await late.close();

    // Forced: the file changed by hand is put back too.
    const forced = await fx.client.conversation.rewind({ conversationId: id, beforeRecordId: assistantId, restoreFiles: true, force: true });
    expect(forced.filesRestored).toEqual([
      { path: "a.txt", action: "restored" },
      { path: "b.txt", action: "restored" },
      { path: "new.txt", action: "removed" },
    ]);
    expect(await read(ws, "b.txt")).toBe("x\n");

    // The next model request holds none of the records taken back.
    await fx.client.message.append({ conversationId: id, role: "user", content: "start over" });
    fx.fake.enqueue({ kind: "reply", text: ["Fine."] });
    const next = await fx.client.step({ conversationId: id });
    await events.waitForEnd(next.generationId);
    const shown = fx.fake.messagesOf(fx.fake.requests.length - 1);
    expect(shown.filter((m) => m.role !== "system").map((m) => [m.role, m.content])).toEqual([
      ["user", "change the files"],
      ["user", "start over"],
    ]);
    // Something was appended since: the rewind is final.
    await expect(fx.client.conversation.unrewind({ conversationId: id })).rejects.toMatchObject({ code: -32024 });
  };
}

describe("conversation.rewind on the embedded store", () => {
  it(
    "two edits and a new file are undone (a file changed by hand is reported and left, force restores it), unrewind redoes, the next request holds none of it; across a restart",
    rewindScenario(async () => ({ server: { dataDir: await freshDir("data") } })),
    30_000,
  );

  it("is refused while a generation runs", async () => {
    const ws = await freshDir("ws");
    const fx = await start({ config: { server: { dataDir: await freshDir("data") } } });
    fx.fake.enqueue({ kind: "reply", toolCalls: [call("call_w", "write_file", { path: "w.txt", content: "w\n" })] }, { kind: "reply", text: ["ok"] });
    const { id, events } = await newConversation(fx.client, { workspace: ws });
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    await expect(fx.client.conversation.rewind({ conversationId: id, beforeRecordId: records![0]!.id, restoreFiles: true })).rejects.toMatchObject({
      code: -32020,
      data: { generationId },
    });
    await expect(fx.client.conversation.unrewind({ conversationId: id })).rejects.toMatchObject({ code: -32020 });
    await fx.client.interrupt({ conversationId: id });
    await events.waitForEnd(generationId);
    expect((await fx.client.conversation.get({ conversationId: id })).conversation.recordCount).toBe(records!.length + 2);
  });

  it("a step asked while a rewind runs waits for it: its model request holds none of the records taken back", async () => {
    const ws = await freshDir("ws");
    const fx = await start({ config: { server: { dataDir: await freshDir("data") } } });
    const { id, assistantId } = await editingTurn(fx, ws);
    const events = new EventRecorder(fx.client, id);
    await fx.client.conversation.subscribe({ conversationId: id });
    fx.fake.enqueue({ kind: "reply", text: ["Again."] });
    const requestsBefore = fx.fake.requests.length;
    const [rewound, step] = await Promise.all([
      fx.client.conversation.rewind({ conversationId: id, beforeRecordId: assistantId, restoreFiles: true }),
      fx.client.step({ conversationId: id }),
    ]);
    expect(rewound.recordsRemoved).toBeGreaterThan(0);
    await events.waitForEnd(step.generationId);
    expect(fx.fake.requests.length).toBe(requestsBefore + 1);
    const shown = fx.fake.messagesOf(requestsBefore);
    expect(shown.filter((m) => m.role !== "system").map((m) => [m.role, m.content])).toEqual([["user", "change the files"]]);
    expect(await read(ws, "a.txt")).toBe("one\n");
  });

  it("the byte bound drops the oldest checkpoint with a checkpoint_dropped notice; a rewind then reports that file", async () => {
    const ws = await freshDir("ws");
    const fx = await start({ config: { server: { dataDir: await freshDir("data") }, limits: { maxCheckpointBytes: 900 } } });
    await writeFile(join(ws, "big1.txt"), "1".repeat(400));
    await writeFile(join(ws, "big2.txt"), "2".repeat(400));
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [call("call_1", "write_file", { path: "big1.txt", content: "one\n" })] },
      { kind: "reply", toolCalls: [call("call_2", "write_file", { path: "big2.txt", content: "two\n" })] },
      { kind: "reply", text: ["ok"] },
    );
    const { id, events } = await newConversation(fx.client, { workspace: ws });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);
    const notices = events.of("notice").filter((n) => n.code === "checkpoint_dropped");
    expect(notices).toEqual([
      expect.objectContaining({ level: "warning", data: { dropped: 1, paths: ["big1.txt"], toolCallIds: ["call_1"], maxCheckpointBytes: 900 } }),
    ]);
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    const result = await fx.client.conversation.rewind({ conversationId: id, beforeRecordId: records![1]!.id, restoreFiles: true });
    expect(result.filesRestored).toEqual([{ path: "big2.txt", action: "restored" }]);
    expect(result.filesNotRestored).toEqual([{ path: "big1.txt", reason: "no_checkpoint", message: expect.stringContaining("dropped") }]);
    expect(await read(ws, "big2.txt")).toBe("2".repeat(400));
    expect(await read(ws, "big1.txt")).toBe("one\n");
  });

  it("lists shell calls among the records taken back; without restoreFiles no file is touched; an unknown record is refused", async () => {
    const ws = await freshDir("ws");
    const fx = await start({ config: { server: { dataDir: await freshDir("data") } } });
    fx.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [call("call_sh", "shell", { command: "echo hi > sh.txt" }), call("call_wr", "write_file", { path: "kept.txt", content: "k\n" })],
      },
      { kind: "reply", text: ["ok"] },
    );
    const { id, events } = await newConversation(fx.client, { workspace: ws });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);
    await expect(fx.client.conversation.rewind({ conversationId: id, beforeRecordId: "r_nope", restoreFiles: false })).rejects.toMatchObject({
      code: -32602,
    });
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    const result = await fx.client.conversation.rewind({ conversationId: id, beforeRecordId: records![1]!.id, restoreFiles: false });
    expect(result).toMatchObject({ filesRestored: [], filesNotRestored: [], unrestorableCalls: [{ toolCallId: "call_sh", toolName: "shell" }] });
    expect(await read(ws, "kept.txt")).toBe("k\n");
  });

  it("conversation.delete removes the checkpoints", async () => {
    const ws = await freshDir("ws");
    const dataDir = await freshDir("data");
    const fx = await start({ config: { server: { dataDir } } });
    const { id } = await editingTurn(fx, ws);
    const documents = async () => (await readdir(join(dataDir), { recursive: true })).filter((f) => String(f).includes(`document-checkpoints`));
    expect(await documents()).toHaveLength(1);
    await fx.client.conversation.delete({ conversationId: id });
    expect(await documents()).toEqual([]);
  });
});

describe.skipIf(!pgUp)("conversation.rewind on PostgreSQL", () => {
  const db = usePostgresDatabase("rewind");

  it(
    "the same, with the checkpoints and the records taken back in the database",
    rewindScenario(async () => ({ server: { store: db.url, dataDir: await freshDir("data") } })),
    30_000,
  );

  it("conversation.delete removes the checkpoints", async () => {
    const ws = await freshDir("ws");
    const fx = await start({ config: { server: { store: db.url, dataDir: await freshDir("data") } } });
    const { id } = await editingTurn(fx, ws);
    const count = async () =>
      Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM agentwire_documents WHERE conversation_id = $1", [id]))[0]!.n);
    expect(await count()).toBe(1);
    await fx.client.conversation.delete({ conversationId: id });
    expect(await count()).toBe(0);
  });
});
