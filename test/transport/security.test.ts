/**
 * Who may connect, and what a client can do to the server: token and Origin
 * checks on the upgrade, refusing to listen beyond loopback without a token,
 * oversized frames, and faults that must not leak server details.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { startServer } from "../../src/server.js";
import { attemptUpgrade, openInitialized, openRaw } from "../harness/raw-socket.js";
import { rpcError } from "../harness/rpc-errors.js";
import { testConfig } from "../harness/test-config.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const TOKEN = "s3cret-token-value";

let ts: TestServer | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await ts?.close();
  ts = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The socket opened with these upgrade options completes initialize (the connection is usable). */
async function expectUsable(url: string, options: Parameters<typeof openRaw>[1], protocols?: string[]): Promise<void> {
  const raw = await openRaw(url, options, protocols);
  raw.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "1.0" } }));
  const reply = (await raw.next()) as { id: number; result?: { serverInfo: { name: string } } };
  expect(reply.id).toBe(1);
  expect(reply.result?.serverInfo.name).toBe("agentwire");
  raw.close();
}

describe("token", () => {
  it("refuses an upgrade without the token, or with a wrong one, with HTTP 401", async () => {
    ts = await startTestServer({ server: { token: TOKEN } });
    const none = await attemptUpgrade(ts.url);
    expect(none.status).toBe(401);
    expect(none.body).not.toContain(TOKEN);

    for (const wrong of ["nope", TOKEN.slice(0, -1), TOKEN + "x", TOKEN.toUpperCase(), ""]) {
      expect((await attemptUpgrade(ts.url, { headers: { Authorization: `Bearer ${wrong}` } })).status, wrong).toBe(401);
      expect((await attemptUpgrade(`${ts.url}/?token=${encodeURIComponent(wrong)}`)).status, wrong).toBe(401);
    }
    expect((await attemptUpgrade(ts.url, {}, ["agentwire.v1", "bearer.wrong"])).status).toBe(401);
    // The token must be presented as a bearer token, not as a bare header value.
    expect((await attemptUpgrade(ts.url, { headers: { Authorization: TOKEN } })).status).toBe(401);
  });

  it("accepts the token as Authorization: Bearer", async () => {
    ts = await startTestServer({ server: { token: TOKEN } });
    const outcome = await attemptUpgrade(ts.url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(outcome.status).toBe(101);
    await expectUsable(ts.url, { headers: { Authorization: `Bearer ${TOKEN}` } });
  });

  it("accepts the token as ?token=", async () => {
    ts = await startTestServer({ server: { token: TOKEN } });
    expect((await attemptUpgrade(`${ts.url}/?token=${TOKEN}`)).status).toBe(101);
    await expectUsable(`${ts.url}/?token=${TOKEN}`, {});
    // The generated client sends it that way.
    const client = await ts.connect({ token: TOKEN });
    expect((await client.server.status()).connections).toBeGreaterThanOrEqual(1);
  });

  it("accepts the token as subprotocol bearer.<token> next to agentwire.v1, and answers agentwire.v1", async () => {
    ts = await startTestServer({ server: { token: TOKEN } });
    for (const offered of [
      ["agentwire.v1", `bearer.${TOKEN}`],
      [`bearer.${TOKEN}`, "agentwire.v1"],
    ]) {
      const outcome = await attemptUpgrade(ts.url, {}, offered);
      expect(outcome.status).toBe(101);
      expect(outcome.protocol).toBe("agentwire.v1");
      expect(outcome.protocol).not.toContain(TOKEN);
    }
    await expectUsable(ts.url, {}, ["agentwire.v1", `bearer.${TOKEN}`]);
  });

  it("answers 400 with a clear reason when bearer.<token> is the only subprotocol offered", async () => {
    ts = await startTestServer({ server: { token: TOKEN } });
    const outcome = await attemptUpgrade(ts.url, {}, [`bearer.${TOKEN}`]);
    expect(outcome.status).toBe(400);
    expect(outcome.body).toContain("agentwire.v1");
    expect(outcome.body).not.toContain(TOKEN);
  });

  it("needs no token when none is configured", async () => {
    ts = await startTestServer();
    expect((await attemptUpgrade(ts.url)).status).toBe(101);
  });
});

describe("Origin", () => {
  it("refuses a foreign browser Origin with HTTP 403, even with a valid token", async () => {
    ts = await startTestServer();
    const evil = await attemptUpgrade(ts.url, { origin: "http://evil.example" });
    expect(evil.status).toBe(403);
    // Look-alikes of the server's own origin are foreign too.
    for (const origin of [
      `http://127.0.0.1:${ts.server.port}.evil.example`,
      `http://127.0.0.1:${ts.server.port + 1}`,
      "null",
    ]) {
      expect((await attemptUpgrade(ts.url, { origin })).status, origin).toBe(403);
    }
    await ts.close();

    ts = await startTestServer({ server: { token: TOKEN } });
    const withToken = await attemptUpgrade(ts.url, { origin: "http://evil.example", headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(withToken.status).toBe(403);
  });

  it("accepts the server's own origin, allowOrigins entries, and clients that send no Origin", async () => {
    ts = await startTestServer({ server: { allowOrigins: ["http://localhost:5173"] } });
    const own = `http://127.0.0.1:${ts.server.port}`;
    expect((await attemptUpgrade(ts.url, { origin: own })).status).toBe(101);
    // The other loopback names of the same port are the same server.
    expect((await attemptUpgrade(ts.url, { origin: `http://localhost:${ts.server.port}` })).status).toBe(101);
    expect((await attemptUpgrade(ts.url, { origin: "http://localhost:5173" })).status).toBe(101);
    expect((await attemptUpgrade(ts.url, { origin: "http://localhost:5174" })).status).toBe(403);
    expect((await attemptUpgrade(ts.url)).status).toBe(101);
    await expectUsable(ts.url, { origin: own });
  });

  it("refuses a page whose host name merely resolves to the server (DNS rebinding)", async () => {
    // A page on http://evil.example:PORT whose name was rebound to 127.0.0.1 sends
    // Host and Origin that agree with each other but name a foreign site.
    ts = await startTestServer();
    const foreign = `evil.example:${ts.server.port}`;
    const outcome = await attemptUpgrade(ts.url, { origin: `http://${foreign}`, headers: { Host: foreign } });
    expect(outcome.status).toBe(403);
  });
});

describe("listening beyond loopback", () => {
  it("refuses to start on 0.0.0.0 (or ::) without a token, and says so", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agentwire-sec-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const log = createLogger("silent");
    for (const host of ["0.0.0.0", "::"]) {
      await expect(startServer(testConfig({ server: { host, port: 0, dataDir, heartbeatMs: 0 } }), { log })).rejects.toThrow(/token/);
    }
    // With a token it starts (so the refusal above was about the token), and the data dir is free again.
    const server = await startServer(testConfig({ server: { host: "0.0.0.0", port: 0, dataDir, token: TOKEN, heartbeatMs: 0 } }), { log });
    cleanups.push(() => server.close());
    expect(server.port).toBeGreaterThan(0);
    const url = `ws://127.0.0.1:${server.port}`;
    expect((await attemptUpgrade(url)).status).toBe(401);
    expect((await attemptUpgrade(url, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(101);
  });
});

describe("oversized frames", () => {
  it("closes only the offending socket with 1009; other clients keep working", async () => {
    ts = await startTestServer({ limits: { maxPayloadBytes: 1024 } });
    const bystander = await ts.connect();
    expect(bystander.initializeResult.capabilities.maxPayloadBytes).toBe(1024);
    const offender = await openInitialized(ts.url);

    // A frame of exactly the limit is still read.
    const base = JSON.stringify({ jsonrpc: "2.0", id: "fit", method: "conversation.create", params: { system: "" } });
    const padding = "x".repeat(1024 - base.length);
    const fit = base.replace('"system":""', `"system":"${padding}"`);
    expect(Buffer.byteLength(fit)).toBe(1024);
    offender.socket.send(fit);
    await offender.waitForFrames(1);
    expect(JSON.parse(offender.frames[0]!)).toMatchObject({ id: "fit", result: { system: padding } });

    offender.socket.send("x".repeat(2048));
    const closed = await offender.closed;
    expect(closed.code).toBe(1009);

    const status = await bystander.server.status();
    expect(status.connections).toBe(1);
    const c = await bystander.conversation.create({ title: "still here" });
    expect(c.title).toBe("still here");
    // New connections are fine too.
    const later = await ts.connect();
    expect((await later.conversation.list({})).data).toHaveLength(2);
  });
});

describe("faults do not leak", () => {
  it("a damaged store file is answered without local paths: listed apart, CONVERSATION_DAMAGED on get; the server keeps serving", async () => {
    ts = await startTestServer();
    const client = await ts.connect();
    const c = await client.conversation.create({ title: "will be damaged" });
    await ts.stop();
    const dataDir = ts.dataDir;
    // Restart on the same data dir so the conversation is read from disk again.
    ts = await startTestServer({ server: { dataDir } });
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    await writeFile(join(dataDir, "conversations", c.id, "meta.json"), "{ not json");
    const again = await ts.connect();

    const page = await again.conversation.list({});
    expect(page.data.map((x) => x.id)).not.toContain(c.id);
    expect(page.damaged?.map((d) => d.conversationId)).toEqual([c.id]);
    expect(JSON.stringify(page)).not.toContain(dataDir);
    const error = await rpcError(again.conversation.get({ conversationId: c.id }));
    expect(error.code).toBe(-32011);
    expect(error.message).not.toContain(dataDir);
    // It may name the damaged file within the conversation (meta.json), never where it lives.
    expect(error.message).not.toContain("conversations/");
    expect(JSON.stringify(error.data ?? null)).not.toContain(dataDir);
    const fresh = await again.conversation.create({ title: "fine" });
    expect((await again.conversation.get({ conversationId: fresh.id })).conversation.title).toBe("fine");
  });
});
