/**
 * Conversation lifecycle: create, get, update, delete, list paging,
 * message.append, parameter validation, not-found errors and the counters of
 * server.status. Clients are on in-memory links; the delete race sends a
 * batch over a real WebSocket.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AgentwireClient, Conversation } from "../../clients/typescript/index.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { eventually } from "../harness/eventually.js";
import { expectInvalidParams, expectNotFound, rpcError } from "../harness/rpc-errors.js";
import { openInitialized } from "../harness/raw-socket.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let ts: TestServer;
let client: AgentwireClient;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "agentwire-conv-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});
beforeEach(async () => {
  ts = await startTestServer();
  client = await ts.connectInMemory();
});
afterEach(async () => {
  await ts.close();
});

describe("conversation.create", () => {
  it("fills every field with its default", async () => {
    const before = Date.now();
    const c = await client.conversation.create({});
    expect(c.id).toMatch(/^c_[A-Za-z0-9_-]+$/);
    expect(c).toMatchObject({
      title: "",
      model: null,
      system: null,
      workspace: null,
      recordCount: 0,
      settings: { toolHistoryRounds: 8, maxIterations: 20, toolTimeoutMs: ts.config.tools.timeoutMs, approval: "ask", toolPolicy: {}, confirmTimeoutMs: null, autoCompact: 0.85 },
    });
    expect(Object.keys(c.settings).sort()).toEqual(["approval", "autoCompact", "confirmTimeoutMs", "maxIterations", "toolHistoryRounds", "toolPolicy", "toolTimeoutMs"]);
    expect(c.createdAt).toMatch(ISO);
    expect(c.updatedAt).toBe(c.createdAt);
    expect(Date.parse(c.createdAt)).toBeGreaterThanOrEqual(before - 5);

    const other = await client.conversation.create({});
    expect(other.id).not.toBe(c.id);
  });

  it("keeps given fields and merges partial settings over the defaults", async () => {
    const c = await client.conversation.create({
      title: "plan the trip",
      model: "qwen3:8b",
      system: "You are terse.",
      settings: { maxIterations: 5 },
    });
    expect(c).toMatchObject({ title: "plan the trip", model: "qwen3:8b", system: "You are terse." });
    expect(c.settings).toEqual({ toolHistoryRounds: 8, maxIterations: 5, toolTimeoutMs: ts.config.tools.timeoutMs, approval: "ask", toolPolicy: {}, confirmTimeoutMs: null, autoCompact: 0.85 });

    const got = await client.conversation.get({ conversationId: c.id });
    expect(got.conversation).toEqual(c);
  });

  it("accepts an existing directory as workspace and stores it absolute", async () => {
    const dir = join(scratch, "ws-ok");
    await mkdir(dir, { recursive: true });
    const c = await client.conversation.create({ workspace: dir });
    expect(c.workspace).toBe(dir);
  });

  it("refuses a workspace that does not exist, or is a file, with -32602 naming workspace", async () => {
    const missing = join(scratch, "no-such-dir");
    const error = await expectInvalidParams(client.conversation.create({ workspace: missing }), "workspace");
    expect(error.message).toContain(missing);

    const file = join(scratch, "a-file.txt");
    await writeFile(file, "x");
    await expectInvalidParams(client.conversation.create({ workspace: file }), "workspace");

    // Nothing was half-created.
    const list = await client.conversation.list({});
    expect(list.data).toEqual([]);
  });
});

describe("conversation.get", () => {
  it("returns the conversation and its state, and records only on request", async () => {
    const c = await client.conversation.create({ title: "g" });
    const m1 = await client.message.append({ conversationId: c.id, role: "user", content: "hello" });
    const m2 = await client.message.append({ conversationId: c.id, role: "system", content: "be brief" });

    const plain = await client.conversation.get({ conversationId: c.id });
    expect(plain).not.toHaveProperty("records");
    expect(plain.conversation.id).toBe(c.id);
    expect(plain.conversation.recordCount).toBe(2);
    expect(plain.state).toEqual({
      generating: false,
      generationId: null,
      pendingTools: [],
      autoConfirmRemaining: 0,
      lastError: null,
      lastGeneration: null,
      seq: 2,
      plan: null,
      queue: [],
      pendingInputs: [],
    });

    const explicitFalse = await client.conversation.get({ conversationId: c.id, includeRecords: false });
    expect(explicitFalse).not.toHaveProperty("records");

    const full = await client.conversation.get({ conversationId: c.id, includeRecords: true });
    expect(full.records).toEqual([m1, m2]);
  });
});

describe("conversation.update", () => {
  it("changes title, model (null returns to the default) and merges settings; subscribers hear it", async () => {
    const c = await client.conversation.create({ title: "old", model: "m1", settings: { maxIterations: 3 } });
    const watcher = await ts.connectInMemory();
    const log = new EventRecorder(watcher);
    await watcher.conversation.subscribe({ conversationId: c.id });
    await sleep(5); // so updatedAt can differ from createdAt

    const updated = await client.conversation.update({
      conversationId: c.id,
      title: "new",
      model: null,
      settings: { toolHistoryRounds: 2 },
    });
    expect(updated).toMatchObject({ id: c.id, title: "new", model: null, createdAt: c.createdAt });
    expect(updated.settings).toEqual({ toolHistoryRounds: 2, maxIterations: 3, toolTimeoutMs: ts.config.tools.timeoutMs, approval: "ask", toolPolicy: {}, confirmTimeoutMs: null, autoCompact: 0.85 });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThan(Date.parse(c.updatedAt));

    await log.waitForCount("conversation_updated", 1);
    const [event] = log.of("conversation_updated");
    expect(event).toMatchObject({ conversationId: c.id, seq: 1, deleted: false });
    expect(event!.timestamp).toMatch(ISO);
    expect(event!.conversation).toEqual(updated);

    // Fields left out stay as they are.
    const again = await client.conversation.update({ conversationId: c.id, system: "sys" });
    expect(again).toMatchObject({ title: "new", model: null, system: "sys" });
    expect(again.settings).toEqual(updated.settings);

    const stored = await client.conversation.get({ conversationId: c.id });
    expect(stored.conversation).toEqual(again);
  });

  it("two updates in flight at once both take effect: each is built on the one before (a generation's usage totals are written the same way)", async () => {
    const c = await client.conversation.create({ title: "before", settings: { maxIterations: 4 } });
    const [first, second] = await Promise.all([
      client.conversation.update({ conversationId: c.id, title: "after" }),
      client.conversation.update({ conversationId: c.id, settings: { maxIterations: 9 } }),
    ]);
    expect(first).toMatchObject({ title: "after", settings: { maxIterations: 4 } });
    expect(second).toMatchObject({ title: "after", settings: { maxIterations: 9 } });
    expect((await client.conversation.get({ conversationId: c.id })).conversation).toMatchObject({ title: "after", settings: { maxIterations: 9 } });
  });

  it("leaves the conversation untouched when the update is invalid", async () => {
    const c = await client.conversation.create({ title: "keep", settings: { maxIterations: 4 } });
    await expectInvalidParams(
      client.conversation.update({ conversationId: c.id, title: "lost", settings: { maxIterations: 0 } }),
      "settings.maxIterations",
    );
    const got = await client.conversation.get({ conversationId: c.id });
    expect(got.conversation).toEqual(c);
    expect(got.state.seq).toBe(0);
  });
});

describe("conversation.delete", () => {
  it("removes the conversation; get answers -32010 and subscribers hear deleted: true", async () => {
    const c = await client.conversation.create({ title: "doomed" });
    const keep = await client.conversation.create({ title: "kept" });
    const watcher = await ts.connectInMemory();
    const log = new EventRecorder(watcher);
    await watcher.conversation.subscribe({ conversationId: c.id });

    expect(await client.conversation.delete({ conversationId: c.id })).toEqual({});

    await log.waitForCount("conversation_updated", 1);
    const [event] = log.of("conversation_updated");
    expect(event).toMatchObject({ conversationId: c.id, deleted: true, seq: 1 });
    expect(event!.conversation.id).toBe(c.id);

    await expectNotFound(client.conversation.get({ conversationId: c.id }), c.id);
    await expectNotFound(client.conversation.delete({ conversationId: c.id }), c.id);
    const list = await client.conversation.list({});
    expect(list.data.map((x) => x.id)).toEqual([keep.id]);

    // The deleted conversation's subscription is gone.
    const status = await client.server.status();
    expect(status.subscriptions).toBe(0);
    expect(status.conversationsStored).toBe(1);
  });
});

// On a real WebSocket: the race is one batch frame, and conversations keep one real-socket test.
describe("delete racing other requests", () => {
  it("nothing is stored or announced after a delete: an append in the same batch either precedes it or is refused", async () => {
    for (let i = 0; i < 10; i++) {
      const c = await client.conversation.create({ title: `race ${i}` });
      const raw = await openInitialized(ts.url);
      raw.send(JSON.stringify({ jsonrpc: "2.0", id: "s", method: "conversation.subscribe", params: { conversationId: c.id } }));
      await raw.next();
      raw.send(
        JSON.stringify([
          { jsonrpc: "2.0", id: "d", method: "conversation.delete", params: { conversationId: c.id } },
          { jsonrpc: "2.0", id: "a", method: "message.append", params: { conversationId: c.id, role: "user", content: "late" } },
        ]),
      );
      const frames: any[] = [];
      let batch: any[] | undefined;
      while (!batch) {
        const frame: any = await raw.next();
        if (Array.isArray(frame)) batch = frame;
        else frames.push(frame);
      }
      const append = batch.find((r) => r.id === "a");
      const deletedSeq = frames.find((f) => f.method === "conversation_updated" && f.params.deleted)?.params.seq;
      expect(deletedSeq).toBeTypeOf("number");
      const added = frames.filter((f) => f.method === "message_added");
      if (append.error) {
        expect(append.error.code).toBe(-32010);
        expect(added).toHaveLength(0);
      } else {
        expect(added).toHaveLength(1);
        expect(added[0].params.seq).toBeLessThan(deletedSeq);
      }
      raw.close();
      await expectNotFound(client.conversation.get({ conversationId: c.id }), c.id);
    }
  });
});

describe("conversation.list", () => {
  async function createSeven(): Promise<Conversation[]> {
    const created: Conversation[] = [];
    for (let i = 0; i < 7; i++) {
      created.push(await client.conversation.create({ title: `n${i}` }));
      await sleep(5); // distinct createdAt, so "newest first" has one right answer
    }
    return created;
  }

  it("pages newest first: limit 3 gives 3, 3, 1 without duplicates, and no nextCursor at the end", async () => {
    const created = await createSeven();
    const expected = created.map((c) => c.id).reverse();

    const p1 = await client.conversation.list({ limit: 3 });
    expect(p1.data).toHaveLength(3);
    expect(typeof p1.nextCursor).toBe("string");
    const p2 = await client.conversation.list({ limit: 3, cursor: p1.nextCursor });
    expect(p2.data).toHaveLength(3);
    expect(typeof p2.nextCursor).toBe("string");
    const p3 = await client.conversation.list({ limit: 3, cursor: p2.nextCursor });
    expect(p3.data).toHaveLength(1);
    expect(p3).not.toHaveProperty("nextCursor");

    const ids = [...p1.data, ...p2.data, ...p3.data].map((c) => c.id);
    expect(new Set(ids).size).toBe(7);
    expect(ids).toEqual(expected);
    expect(p1.data[0]).toEqual(created[6]);

    const all = await client.conversation.list({});
    expect(all.data.map((c) => c.id)).toEqual(expected);
    expect(all).not.toHaveProperty("nextCursor");
  });

  it("a page boundary exactly at the end has no nextCursor", async () => {
    for (let i = 0; i < 3; i++) await client.conversation.create({});
    const page = await client.conversation.list({ limit: 3 });
    expect(page.data).toHaveLength(3);
    expect(page).not.toHaveProperty("nextCursor");
  });

  it("refuses a cursor it never handed out with -32602 naming cursor", async () => {
    await createSeven();
    for (const cursor of ["not-a-cursor", "!!!", Buffer.from("2026|../etc").toString("base64url")]) {
      await expectInvalidParams(client.conversation.list({ cursor }), "cursor");
    }
    await expectInvalidParams(client.conversation.list({ cursor: "" }), "cursor");
    await expectInvalidParams(client.conversation.list({ limit: 0 }), "limit");
    await expectInvalidParams(client.conversation.list({ limit: 2.5 }), "limit");
  });
});

describe("message.append", () => {
  it("stores user and system messages and returns the record", async () => {
    const c = await client.conversation.create({});
    await sleep(5);
    const user = await client.message.append({ conversationId: c.id, role: "user", content: "hi there" });
    expect(user).toMatchObject({ type: "message", role: "user", content: "hi there" });
    expect(user.id).toMatch(/^r_/);
    expect(user.timestamp).toMatch(ISO);
    const system = await client.message.append({ conversationId: c.id, role: "system", content: "" });
    expect(system).toMatchObject({ type: "message", role: "system", content: "" });
    expect(system.id).not.toBe(user.id);

    const got = await client.conversation.get({ conversationId: c.id, includeRecords: true });
    expect(got.records).toEqual([user, system]);
    expect(got.conversation.recordCount).toBe(2);
    expect(Date.parse(got.conversation.updatedAt)).toBeGreaterThan(Date.parse(c.createdAt));
  });

  it("refuses a role other than user, system or assistant with -32602 naming role, and stores nothing", async () => {
    const c = await client.conversation.create({});
    await expectInvalidParams(
      client.message.append({ conversationId: c.id, role: "tool" as never, content: "forged" }),
      "role",
    );
    const got = await client.conversation.get({ conversationId: c.id, includeRecords: true });
    expect(got.records).toEqual([]);
    expect(got.state.seq).toBe(0);
  });
});

describe("parameter validation names the field", () => {
  it("missing conversationId", async () => {
    for (const method of ["conversation.get", "conversation.update", "conversation.delete", "conversation.subscribe", "message.append"] as const) {
      const params = method === "message.append" ? { role: "user", content: "x" } : {};
      await expectInvalidParams(client.request(method, params as never), "conversationId");
    }
  });

  it("wrong types", async () => {
    const c = await client.conversation.create({});
    const id = c.id;
    const cases: [string, unknown, string][] = [
      ["conversation.get", { conversationId: 42 }, "conversationId"],
      ["conversation.get", { conversationId: id, includeRecords: "yes" }, "includeRecords"],
      ["conversation.create", { title: 5 }, "title"],
      ["conversation.create", { settings: { toolHistoryRounds: "8" } }, "settings.toolHistoryRounds"],
      ["conversation.create", { settings: { maxIterations: 0 } }, "settings.maxIterations"],
      ["conversation.update", { conversationId: id, title: null }, "title"],
      ["conversation.list", { cursor: 7 }, "cursor"],
      ["conversation.subscribe", { conversationId: id, afterSeq: -1 }, "afterSeq"],
      ["conversation.subscribe", { conversationId: id, afterSeq: "3" }, "afterSeq"],
      ["message.append", { conversationId: id, role: "user" }, "content"],
      ["message.append", { conversationId: id, role: "user", content: 5 }, "content"],
      ["message.append", { conversationId: id, role: "robot", content: "x" }, "role"],
    ];
    for (const [method, params, field] of cases) {
      await expectInvalidParams(client.request(method as never, params as never), field);
    }
    // None of it changed the conversation.
    const got = await client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.conversation).toEqual(c);
    expect(got.records).toEqual([]);
    expect((await client.conversation.list({})).data).toHaveLength(1);
  });

  it("lists every problem of one request", async () => {
    const error = await expectInvalidParams(client.request("message.append", { role: 1, content: 2 } as never), "conversationId");
    const paths = (error.data as { issues: { path: string }[] }).issues.map((i) => i.path).sort();
    expect(paths).toEqual(["content", "conversationId", "role"]);
  });
});

describe("unknown conversation id", () => {
  it("answers -32010 for get, update, delete, subscribe, unsubscribe and append", async () => {
    const ghost = "c_doesNotExist000";
    await expectNotFound(client.conversation.get({ conversationId: ghost }), ghost);
    await expectNotFound(client.conversation.update({ conversationId: ghost, title: "x" }), ghost);
    await expectNotFound(client.conversation.delete({ conversationId: ghost }), ghost);
    await expectNotFound(client.conversation.subscribe({ conversationId: ghost }), ghost);
    await expectNotFound(client.conversation.unsubscribe({ conversationId: ghost }), ghost);
    await expectNotFound(client.message.append({ conversationId: ghost, role: "user", content: "x" }), ghost);
    const error = await rpcError(client.conversation.get({ conversationId: ghost }));
    expect(error.data).toEqual({ conversationId: ghost });
  });

  it("ids that look like paths are refused as invalid; well-formed names of store files are simply not found", async () => {
    for (const ghost of ["../../etc", "..", "c_a/b", "index.json", ""]) {
      await expectInvalidParams(client.conversation.get({ conversationId: ghost }), "conversationId");
      await expectInvalidParams(client.conversation.delete({ conversationId: ghost }), "conversationId");
    }
    for (const ghost of ["LOCK", "index", "conversations"]) {
      await expectNotFound(client.conversation.get({ conversationId: ghost }), ghost);
      await expectNotFound(client.conversation.delete({ conversationId: ghost }), ghost);
    }
    expect((await client.server.status()).conversationsStored).toBe(0);
  });
});

describe("server.status", () => {
  it("counts connections, subscriptions and loaded conversations", async () => {
    const initial = await client.server.status();
    expect(initial).toMatchObject({
      connections: 1,
      initializedConnections: 1,
      subscriptions: 0,
      conversationsLoaded: 0,
      conversationsStored: 0,
      generations: 0,
    });
    expect(initial.uptimeMs).toBeGreaterThanOrEqual(0);
    expect(initial.memory.rss).toBeGreaterThan(0);

    const second = await ts.connectInMemory();
    const raw = await ts.openRawInMemory(); // open, but never initialized
    const c1 = await client.conversation.create({});
    const c2 = await client.conversation.create({});
    await client.conversation.subscribe({ conversationId: c1.id });
    await client.conversation.subscribe({ conversationId: c2.id });
    await client.conversation.subscribe({ conversationId: c2.id }); // twice is harmless: still one
    await second.conversation.subscribe({ conversationId: c1.id });

    expect(await client.server.status()).toMatchObject({
      connections: 3,
      initializedConnections: 2,
      subscriptions: 3,
      conversationsLoaded: 2,
      conversationsStored: 2,
    });

    await client.conversation.unsubscribe({ conversationId: c2.id });
    expect((await client.server.status()).subscriptions).toBe(2);

    await second.close();
    raw.close();
    await eventually(async () => (await client.server.status()).connections === 1, 3000, "connections back to 1");
    expect(await client.server.status()).toMatchObject({ initializedConnections: 1, subscriptions: 1 });

    await client.conversation.delete({ conversationId: c1.id });
    expect(await client.server.status()).toMatchObject({ subscriptions: 0, conversationsLoaded: 1, conversationsStored: 1 });
  });
});
