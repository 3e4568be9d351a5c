/**
 * Attachments end to end: workspace text files (whole or a line range) and
 * images uploaded with asset.upload, through the protocol, with real files
 * and symlinks, the real lowdb store, and the fake OpenAI-compatible server
 * recording exactly what the model received.
 */
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { MAX_FILE_ATTACHMENT_BYTES } from "../../protocol/index.js";
import { sniffImageType } from "../../src/attachments/image-type.js";
import type { ConversationStore } from "../../src/store/conversation-store.js";
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";
import { MemoryConversationStore } from "../../src/store/memory-store.js";
import { startAgentFixture, useAgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { expectInvalidParams, rpcError } from "../harness/rpc-errors.js";
import { useStoreDir } from "../harness/store-dir.js";
import { conversation as storedConversation } from "../harness/store-records.js";

const fx = useAgentFixture();

let workspace: string;
let outside: string;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), "agentwire-attach-ws-"));
  outside = await mkdtemp(join(tmpdir(), "agentwire-attach-out-"));
  await mkdir(join(workspace, "src"));
  await writeFile(join(workspace, "src", "app.ts"), numberedLines(30));
  await writeFile(join(workspace, "notes.md"), "# Notes\nno trailing newline");
  await writeFile(join(workspace, "empty.txt"), "");
  await writeFile(join(workspace, "blob.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02, 0x00]));
  await writeFile(join(workspace, "latin1.txt"), Buffer.from("caf\xe9\n", "latin1"));
  await writeFile(join(workspace, "big.txt"), "x".repeat(MAX_FILE_ATTACHMENT_BYTES + 1));
  await writeFile(join(outside, "secret.txt"), "TOP SECRET\n");
  await symlink(join(outside, "secret.txt"), join(workspace, "leak.txt"));
  await symlink(outside, join(workspace, "elsewhere"));
  // A symlink that stays inside is fine.
  await symlink(join(workspace, "notes.md"), join(workspace, "notes-link.md"));
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

function numberedLines(n: number): string {
  return Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
}

/** A real 1×1 PNG (signature, IHDR, IDAT, IEND, with their CRCs), built here so nothing is fetched. */
function tinyPng(rgb: [number, number, number] = [255, 0, 0]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0); // width
  ihdr.writeUInt32BE(1, 4); // height
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour
  const scanline = Buffer.from([0, ...rgb]); // filter byte 0, then one pixel
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(scanline)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

async function workspaceConversation(client: AgentwireClient = fx.client): Promise<{ id: string; events: EventRecorder }> {
  const conversation = await client.conversation.create({ workspace });
  const events = new EventRecorder(client, conversation.id);
  await client.conversation.subscribe({ conversationId: conversation.id });
  return { id: conversation.id, events };
}

/** Runs one step against a scripted plain answer; returns the user message of the model request. */
async function modelSees(id: string, events: EventRecorder, client: AgentwireClient = fx.client, fake = fx.fake): Promise<any> {
  fake.enqueue({ kind: "reply", text: ["Seen."] });
  const { generationId } = await client.step({ conversationId: id });
  const end = await events.waitForEnd(generationId);
  expect(end.method).toBe("generation_complete");
  const request = fake.requests.at(-1)!;
  return request.messages.filter((m: { role: string }) => m.role === "user").at(-1);
}

describe("file attachments", () => {
  it("a line range reaches the model as a tagged block after the text, and is stored with its content", async () => {
    const { id, events } = await workspaceConversation();
    const record = await fx.client.message.append({
      conversationId: id,
      role: "user",
      content: "What do these lines do?",
      attachments: [{ type: "file", path: "src/app.ts", lines: { start: 10, end: 12 } }],
    });
    expect(record.attachments).toEqual([
      { type: "file", path: "src/app.ts", lines: { start: 10, end: 12 }, content: "line 10\nline 11\nline 12\n" },
    ]);
    const user = await modelSees(id, events);
    expect(user.content).toBe('What do these lines do?\n\n<file path="src/app.ts" lines="10-12">\nline 10\nline 11\nline 12\n</file>');
  });

  it("a whole file has no lines attribute; a range ending past the file is clamped and says so", async () => {
    const { id, events } = await workspaceConversation();
    const record = await fx.client.message.append({
      conversationId: id,
      role: "user",
      content: "Compare.",
      attachments: [
        { type: "file", path: "notes.md" },
        { type: "file", path: "./src/../src/app.ts", lines: { start: 29, end: 500 } },
        { type: "file", path: join(workspace, "notes-link.md") },
      ],
    });
    expect(record.attachments!.map((a) => (a.type === "file" ? [a.path, a.lines] : null))).toEqual([
      ["notes.md", undefined],
      ["src/app.ts", { start: 29, end: 30 }],
      ["notes-link.md", undefined],
    ]);
    const user = await modelSees(id, events);
    expect(user.content).toBe(
      [
        "Compare.",
        '<file path="notes.md">\n# Notes\nno trailing newline\n</file>',
        '<file path="src/app.ts" lines="29-30">\nline 29\nline 30\n</file>',
        '<file path="notes-link.md">\n# Notes\nno trailing newline\n</file>',
      ].join("\n\n"),
    );
  });

  it("the content is frozen at append time: a later change of the file does not change the history", async () => {
    await writeFile(join(workspace, "changing.txt"), "first version\n");
    const { id, events } = await workspaceConversation();
    await fx.client.message.append({ conversationId: id, role: "user", content: "Read it.", attachments: [{ type: "file", path: "changing.txt" }] });
    await writeFile(join(workspace, "changing.txt"), "second version\n");
    const user = await modelSees(id, events);
    expect(user.content).toContain("first version");
    expect(user.content).not.toContain("second version");
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records![0]).toMatchObject({ attachments: [{ type: "file", path: "changing.txt", content: "first version\n" }] });
  });

  it("attachments come in message_added and in conversation.get", async () => {
    const { id, events } = await workspaceConversation();
    const appended = await fx.client.message.append({
      conversationId: id,
      role: "user",
      content: "",
      attachments: [{ type: "file", path: "src/app.ts", lines: { start: 1, end: 1 } }],
    });
    const added = await events.waitForMethod("message_added");
    expect(added.params.record).toEqual(appended);
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records).toEqual([appended]);
  });

  it("each refusal is -32602 naming the attachment's field, and nothing is stored", async () => {
    const { id } = await workspaceConversation();
    const append = (attachments: unknown[], role: "user" | "system" = "user") =>
      fx.client.message.append({ conversationId: id, role, content: "see", attachments: attachments as never });
    const file = (path: string, lines?: { start: number; end: number }) => ({ type: "file", path, ...(lines ? { lines } : {}) });

    const cases: [unknown[], string, RegExp][] = [
      [[file("notes.md"), file("missing.ts")], "attachments[1].path", /does not exist/],
      [[file("../outside.txt")], "attachments[0].path", /outside the conversation's workspace/],
      [[file(join(outside, "secret.txt"))], "attachments[0].path", /outside the conversation's workspace/],
      [[file("leak.txt")], "attachments[0].path", /symlink/],
      [[file("elsewhere/secret.txt")], "attachments[0].path", /symlink/],
      [[file("src")], "attachments[0].path", /not a regular file/],
      [[file("blob.bin")], "attachments[0].path", /binary/],
      [[file("latin1.txt")], "attachments[0].path", /not UTF-8/],
      [[file("big.txt")], "attachments[0].path", /limit of a file attachment/],
      [[file("src/app.ts", { start: 12, end: 10 })], "attachments[0].lines.end", /before start/],
      [[file("src/app.ts", { start: 0, end: 3 })], "attachments[0].lines.start", /./],
      [[file("src/app.ts", { start: 31, end: 40 })], "attachments[0].lines.start", /past the end.*30 lines/],
      [[file("empty.txt", { start: 1, end: 1 })], "attachments[0].lines.start", /0 lines/],
      [[file("notes.md"), { type: "image", assetId: "a_doesNotExist" }], "attachments[1].assetId", /no asset/],
      [[{ type: "image", assetId: "../meta.json" }], "attachments[0].assetId", /asset id/],
      [Array.from({ length: 21 }, () => file("notes.md")), "attachments", /./],
    ];
    for (const [attachments, field, message] of cases) {
      const error = await expectInvalidParams(append(attachments), field);
      expect(error.message, field).toMatch(message);
    }
    await expectInvalidParams(append([file("notes.md")], "system"), "attachments");
    // No local path of the server leaks into the answers beyond what the client sent.
    const leak = await rpcError(append([file("leak.txt")]));
    expect(leak.message).not.toContain(outside);
    expect((await fx.client.conversation.get({ conversationId: id })).conversation.recordCount).toBe(0);
  });

  it("the message text and its files together are bounded by maxMessageBytes", async () => {
    const small = await startAgentFixture({ config: { limits: { maxMessageBytes: 1000 } } });
    try {
      await writeFile(join(workspace, "600.txt"), "y".repeat(600));
      const { id } = await workspaceConversation(small.client);
      const error = await rpcError(
        small.client.message.append({
          conversationId: id,
          role: "user",
          content: "z".repeat(100),
          attachments: [{ type: "file", path: "600.txt" }, { type: "file", path: "600.txt" }],
        }),
      );
      expect(error.code).toBe(-32050);
      expect(error.message).toMatch(/attachments\[1\].*maxMessageBytes/);
      expect(error.data).toMatchObject({ limit: "maxMessageBytes", max: 1000, actual: 1300 });
    } finally {
      await small.close();
    }
  });

  it("tool-history truncation keeps the attachments of the current turn", async () => {
    const conversation = await fx.client.conversation.create({ workspace, settings: { toolHistoryRounds: 0 } });
    const events = new EventRecorder(fx.client, conversation.id);
    await fx.client.conversation.subscribe({ conversationId: conversation.id });
    await fx.client.message.append({
      conversationId: conversation.id,
      role: "user",
      content: "Check this, then run echo.",
      attachments: [{ type: "file", path: "src/app.ts", lines: { start: 5, end: 5 } }],
    });
    fx.fake.enqueue(
      { kind: "reply", text: ["Running."], toolCalls: [{ id: "call_1", name: "shell", args: JSON.stringify({ command: "echo hi" }) }] },
      { kind: "reply", text: ["Done."] },
    );
    const { generationId } = await fx.client.step({ conversationId: conversation.id, autoConfirm: true });
    await events.waitForEnd(generationId);
    const second = fx.fake.requests.at(-1)!;
    // The tool call's output was reduced (toolHistoryRounds 0) but the user's file is there in full.
    expect(second.messages.find((m: { role: string }) => m.role === "tool").content).toMatch(/output omitted/);
    expect(second.messages.find((m: { role: string }) => m.role === "user").content).toContain('<file path="src/app.ts" lines="5-5">\nline 5\n</file>');
  });
});

describe("image attachments", () => {
  it("an uploaded PNG reaches the model as an image_url part with its data URL, after the text part", async () => {
    const { id, events } = await workspaceConversation();
    const png = tinyPng();
    const uploaded = await fx.client.asset.upload({ conversationId: id, data: png.toString("base64"), mimeType: "image/png", name: "red.png" });
    expect(uploaded).toEqual({ assetId: expect.stringMatching(/^a_/), mimeType: "image/png", size: png.length });
    const record = await fx.client.message.append({
      conversationId: id,
      role: "user",
      content: "What colour is this?",
      attachments: [
        { type: "image", assetId: uploaded.assetId },
        { type: "file", path: "src/app.ts", lines: { start: 2, end: 2 } },
      ],
    });
    // The record keeps a reference and metadata, never the bytes.
    expect(record.attachments![0]).toEqual({ type: "image", assetId: uploaded.assetId, mimeType: "image/png", size: png.length, name: "red.png" });
    expect(JSON.stringify(record)).not.toContain(png.toString("base64"));

    const user = await modelSees(id, events);
    expect(user.content).toEqual([
      { type: "text", text: 'What colour is this?\n\n<file path="src/app.ts" lines="2-2">\nline 2\n</file>' },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } },
    ]);
  });

  it("the type is recognised from the bytes: a declared type that disagrees, and a non-image, are refused", async () => {
    const { id } = await workspaceConversation();
    const png = tinyPng().toString("base64");
    const mismatch = await expectInvalidParams(fx.client.asset.upload({ conversationId: id, data: png, mimeType: "image/jpeg" }), "mimeType");
    expect(mismatch.message).toContain("the bytes are image/png, not image/jpeg");
    const text = Buffer.from("just some text, not an image").toString("base64");
    expect((await expectInvalidParams(fx.client.asset.upload({ conversationId: id, data: text }), "data")).message).toMatch(/not a PNG, JPEG, GIF or WebP/);
    expect((await expectInvalidParams(fx.client.asset.upload({ conversationId: id, data: `data:image/png;base64,${png}` }), "data")).message).toMatch(
      /without the data: URL prefix/,
    );
    expect((await rpcError(fx.client.asset.upload({ conversationId: "c_nope", data: png }))).code).toBe(-32010);
    // Without a declared type the sniffed one is used.
    expect((await fx.client.asset.upload({ conversationId: id, data: png })).mimeType).toBe("image/png");
  });

  it("recognises the four accepted types by their first bytes", () => {
    expect(sniffImageType(tinyPng())).toBe("image/png");
    expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]))).toBe("image/jpeg");
    expect(sniffImageType(Buffer.from("GIF89a\x01\x00\x01\x00", "latin1"))).toBe("image/gif");
    expect(sniffImageType(Buffer.from("RIFF\x24\x00\x00\x00WEBPVP8 ", "latin1"))).toBe("image/webp");
    expect(sniffImageType(Buffer.from("RIFF\x24\x00\x00\x00WAVEfmt ", "latin1"))).toBeUndefined();
    expect(sniffImageType(Buffer.from([0x89, 0x50]))).toBeUndefined();
  });

  it("an image of another conversation cannot be attached", async () => {
    const a = await workspaceConversation();
    const b = await workspaceConversation();
    const { assetId } = await fx.client.asset.upload({ conversationId: a.id, data: tinyPng().toString("base64") });
    await expectInvalidParams(
      fx.client.message.append({ conversationId: b.id, role: "user", content: "x", attachments: [{ type: "image", assetId }] }),
      "attachments[0].assetId",
    );
  });

  it("conversation.delete removes the asset files", async () => {
    const { id } = await workspaceConversation();
    const { assetId } = await fx.client.asset.upload({ conversationId: id, data: tinyPng().toString("base64") });
    const assets = join(fx.server.dataDir, "conversations", id, "assets");
    expect((await readdir(assets)).sort()).toEqual([assetId, `${assetId}.json`]);
    await fx.client.conversation.delete({ conversationId: id });
    await expect(readdir(assets)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("asset quotas", () => {
  it("an upload over the conversation's or the server's image quota answers LIMIT_EXCEEDED naming it and stores nothing; deleting a conversation frees its share", async () => {
    const size = tinyPng().length;
    const quota = await startAgentFixture({ config: { limits: { maxConversationAssetBytes: 2 * size, maxTotalAssetBytes: 3 * size } } });
    try {
      const upload = (conversationId: string, rgb: [number, number, number] = [1, 2, 3]) =>
        quota.client.asset.upload({ conversationId, data: tinyPng(rgb).toString("base64") });
      const files = async (id: string) => (await readdir(join(quota.server.dataDir, "conversations", id, "assets")).catch(() => [])).length;
      const a = (await quota.client.conversation.create({})).id;
      const b = (await quota.client.conversation.create({})).id;
      await upload(a);
      await upload(a);
      const perConversation = await rpcError(upload(a));
      expect(perConversation.code).toBe(-32050);
      expect(perConversation.data).toEqual({ limit: "maxConversationAssetBytes", max: 2 * size, actual: 3 * size });
      expect(perConversation.message).toBe(
        `Limit exceeded: this conversation keeps ${2 * size} bytes of images; this one (${size} bytes) would bring it over limits.maxConversationAssetBytes (${2 * size}); continue in a new conversation, or raise the limit`,
      );
      expect(await files(a)).toBe(4); // two images, each with its metadata: the refused one left nothing

      await upload(b);
      const total = await rpcError(upload(b));
      expect(total.data).toEqual({ limit: "maxTotalAssetBytes", max: 3 * size, actual: 4 * size });
      expect(await files(b)).toBe(2);

      await quota.client.conversation.delete({ conversationId: a });
      await upload(b);
    } finally {
      await quota.close();
    }
  });
});

describe("after a restart (lowdb store)", () => {
  it("records keep their attachments and the image is read from disk for the next model request", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agentwire-attach-restart-"));
    try {
      const first = await startAgentFixture({ config: { server: { dataDir } } });
      const png = tinyPng([0, 0, 255]);
      let id: string;
      let appended;
      try {
        ({ id } = await workspaceConversation(first.client));
        const { assetId } = await first.client.asset.upload({ conversationId: id, data: png.toString("base64") });
        appended = await first.client.message.append({
          conversationId: id,
          role: "user",
          content: "And now?",
          attachments: [{ type: "file", path: "notes.md" }, { type: "image", assetId }],
        });
      } finally {
        await first.close();
      }
      const second = await startAgentFixture({ config: { server: { dataDir } } });
      try {
        const { records } = await second.client.conversation.get({ conversationId: id, includeRecords: true });
        expect(records).toEqual([appended]);
        const events = new EventRecorder(second.client, id);
        await second.client.conversation.subscribe({ conversationId: id });
        const user = await modelSees(id, events, second.client, second.fake);
        expect(user.content[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } });
        expect(user.content[0].text).toContain('<file path="notes.md">');
        expect(second.fake.rejected).toEqual([]);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

const storeDir = useStoreDir("assets");

describe.each([
  ["LowdbConversationStore", () => storeDir.open()],
  ["MemoryConversationStore", async (): Promise<ConversationStore> => new MemoryConversationStore()],
] as const)("%s: assets", (name, makeStore) => {
  it("stores, describes and reads an asset; unknown ids are undefined; delete takes the assets along", async () => {
    const store = await makeStore();
    const handle = await store.create(storedConversation("c1"));
    const bytes = tinyPng();
    const info = { assetId: "a_one", mimeType: "image/png" as const, size: bytes.length, name: "one.png", createdAt: "2026-01-01T00:00:00.000Z" };
    await handle.putAsset(info, bytes);
    expect(await handle.assetInfo("a_one")).toEqual(info);
    const read = await handle.readAsset("a_one");
    expect(read?.info).toEqual(info);
    expect(Buffer.compare(read!.bytes, bytes)).toBe(0);
    expect(await handle.assetInfo("a_two")).toBeUndefined();
    expect(await handle.readAsset("a_two")).toBeUndefined();
    if (store instanceof LowdbConversationStore) {
      // Survives a reopen; a hostile id never becomes a path.
      await storeDir.close(store);
      const again = await storeDir.open();
      const reloaded = (await again.get("c1"))!;
      expect(await reloaded.assetInfo("a_one")).toEqual(info);
      expect(await reloaded.assetInfo("../meta")).toBeUndefined();
      await expect(reloaded.putAsset({ ...info, assetId: "../x" }, bytes)).rejects.toThrow(/invalid asset id/);
      expect(await again.delete("c1")).toBe(true);
      await expect(readdir(storeDir.conversation("c1"))).rejects.toMatchObject({ code: "ENOENT" });
      const recreated = await again.create(storedConversation("c1"));
      expect(await recreated.assetInfo("a_one")).toBeUndefined();
    } else {
      expect(await store.delete("c1")).toBe(true);
      const recreated = await store.create(storedConversation("c1"));
      expect(await recreated.assetInfo("a_one"), name).toBeUndefined();
    }
  });
});
