/**
 * The web client, end to end: the server serves the bundled app (built here,
 * into a directory of this test's own, by the build that `npm run bundle:web`
 * runs), and a real
 * Chromium, driven by playwright-core, uses it against the fake model —
 * create a conversation, stream an answer, approve and edit tools on their
 * cards, lose the socket (dropped by the server's side of TCP) and come back
 * with nothing lost or doubled, and enter a token when the server needs one.
 *
 * Without /usr/bin/chromium the browser tests are skipped, and say so.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebClient } from "../../clients/web/build.js";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import { WEB_CSP } from "../../src/transport/web-client-files.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const CHROMIUM = "/usr/bin/chromium";
const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser) console.log(`web-client.test.ts: ${CHROMIUM} not found, the browser tests are SKIPPED (apt-get install -y chromium)`);

/** expect.poll with room for a loaded machine (its default gives up after 1 s). */
const until = <T>(fn: () => T | Promise<T>, options: { timeout?: number } = {}) => expect.poll(fn, { timeout: 5000, ...options });

const httpBase = (wsUrl: string) => wsUrl.replace(/^ws:/, "http:").replace(/\/$/, "");

/** The server under test, the fake model behind it, and a client of the test's own (in memory). */
const fx = {} as { fake: FakeOpenAI; server: TestServer; client: AgentwireClient; webDir: string; tmp: string };

beforeAll(async () => {
  fx.tmp = mkdtempSync(join(tmpdir(), "agentwire-web-"));
  fx.webDir = join(fx.tmp, "web");
  const { sizes } = await buildWebClient(fx.webDir);
  console.log(`web client bundle: app.js ${sizes["app.js"]} bytes, app.css ${sizes["app.css"]} bytes (minified)`);
  fx.fake = await startFakeOpenAI({ apiKey: "test-key" });
  fx.server = await startTestServer(
    { model: "fake-model" },
    {
      webDir: fx.webDir,
      provider: async () => new OpenAIProvider({ apiKey: "test-key", baseURL: fx.fake.url, retryBaseDelayMs: 10, retryMaxDelayMs: 20 }),
    },
  );
  fx.client = await fx.server.connectInMemory();
}, 30_000);

afterAll(async () => {
  await fx.server?.close();
  await fx.fake?.close();
  if (fx.tmp) rmSync(fx.tmp, { recursive: true, force: true });
  // No request may have been one the real API would refuse.
  expect(fx.fake?.rejected ?? []).toEqual([]);
});

describe("serving the web client", () => {
  it("serves index.html, app.js and app.css with their content types and a CSP; other paths stay 404", async () => {
    const base = httpBase(fx.server.url);
    for (const [path, type] of [
      ["/", "text/html"],
      ["/index.html", "text/html"],
      ["/app.js", "text/javascript"],
      ["/app.css", "text/css"],
    ]) {
      const response = await fetch(base + path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type"), path).toContain(type);
      expect(response.headers.get("content-security-policy"), path).toBe(WEB_CSP);
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect((await response.text()).length, path).toBeGreaterThan(100);
    }
    expect(WEB_CSP).toContain("default-src 'self'");
    expect(WEB_CSP).toContain("frame-ancestors 'none'");
    // Only the fixed names are files: nothing else of dist/ or the disk is reachable.
    for (const path of ["/web/index.html", "/../package.json", "/app.js.map", "/%2e%2e/package.json"]) {
      expect((await fetch(base + path)).status, path).toBe(404);
    }
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it("answers 503 with a plain reason when the client was never built", async () => {
    const empty = mkdtempSync(join(tmpdir(), "agentwire-no-web-"));
    const server = await startTestServer({}, { webDir: empty });
    try {
      const response = await fetch(`${server.url.replace("ws://", "http://")}/`);
      expect(response.status).toBe(503);
      expect(await response.text()).toBe("web client not built: run npm run build\n");
    } finally {
      await server.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

const LAUNCH_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Every TCP connection the server accepts on `port`, seen through Node's
 * `net.server.socket` diagnostics channel: the test can cut them from the
 * server's side, and refuse new ones for a while, without touching the server.
 */
function watchServerSockets(port: number) {
  const sockets = new Set<Socket>();
  let refusing = false;
  const onSocket = (message: unknown) => {
    const socket = (message as { socket: Socket }).socket;
    if (socket.localPort !== port) return;
    if (refusing) return void socket.destroy();
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  subscribe("net.server.socket", onSocket);
  return {
    /** Cut every open connection and refuse new ones until `allow()`. */
    dropAll() {
      refusing = true;
      for (const socket of sockets) socket.destroy();
    },
    allow() {
      refusing = false;
    },
    dispose: () => unsubscribe("net.server.socket", onSocket),
  };
}

describe.skipIf(!hasBrowser)("in Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** A fresh page (its own storage), with page errors collected: any is a failure. */
  async function openPage(url: string): Promise<{ page: Page; errors: string[]; sent: string[] }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    const sent: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
    page.on("websocket", (socket) => socket.on("framesent", (frame) => sent.push(String(frame.payload))));
    await page.goto(url);
    return { page, errors, sent };
  }

  it(
    "chats with the model, runs a confirmed and an edited tool call, and survives a dropped socket with nothing lost or doubled",
    async () => {
      const base = httpBase(fx.server.url);
      const port = Number(new URL(base).port);
      const sockets = watchServerSockets(port);
      const finalChunks = ["Part one", ", part two", ", part three", ", part four", ", part five."];
      fx.fake.enqueue(
        {
          kind: "reply",
          text: ["Let me look."],
          toolCalls: [
            { id: "call_a", name: "shell", args: JSON.stringify({ command: "echo web-confirmed" }) },
            { id: "call_b", name: "shell", args: JSON.stringify({ command: "echo proposed" }) },
          ],
        },
        {
          kind: "reply",
          text: ["The **answer** is 42. ", '<img src=x onerror="window.__pwned=1">', " [link](javascript:window.__pwned=2)"],
        },
        { kind: "reply", text: finalChunks, delayMs: 80 },
      );
      const { page, errors, sent } = await openPage(`${base}/`);
      try {
        await until(() => page.textContent("#status")).toBe("connected");
        await page.click("#new");
        await page.waitForSelector("#conversations li.active");
        await page.fill("#input", "What is the answer?");
        await page.click("#send");
        // First card: confirm as proposed.
        const cardA = page.locator('[data-tool-call-id="call_a"]');
        await cardA.getByRole("button", { name: "Confirm" }).click();
        await until(() => cardA.getAttribute("data-status")).toBe("completed");
        await until(() => cardA.locator(".tool-output").textContent()).toContain("web-confirmed");

        // Second card: edit; bad JSON is caught in the page before anything is sent.
        const cardB = page.locator('[data-tool-call-id="call_b"]');
        await cardB.getByRole("button", { name: "Edit" }).click();
        await cardB.locator("textarea").fill("{ not json");
        await cardB.getByRole("button", { name: "Run edited" }).click();
        await until(() => cardB.locator(".tool-error").textContent()).toContain("not valid JSON");
        expect(await cardB.getAttribute("data-status")).toBe("pending");
        await cardB.locator("textarea").fill('["an array"]');
        await cardB.getByRole("button", { name: "Run edited" }).click();
        await until(() => cardB.locator(".tool-error").textContent()).toContain("must be a JSON object");
        await cardB.locator("textarea").fill(JSON.stringify({ command: "echo web-edited" }));
        await cardB.getByRole("button", { name: "Run edited" }).click();
        await until(() => cardB.getAttribute("data-status")).toBe("completed");
        expect(await cardB.locator(".tool-status").textContent()).toBe("completed (edited)");
        // The answer, rendered as markdown, with the model's HTML shown as text and its script link inert.
        const answer = page.locator(".message.assistant", { hasText: "is 42" });
        await until(() => answer.locator("strong").textContent()).toBe("answer");
        expect(await answer.textContent()).toContain('<img src=x onerror="window.__pwned=1">');
        expect(await page.locator(".messages img").count()).toBe(0);
        expect(await page.locator('a[href^="javascript"]').count()).toBe(0);
        expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();

        // What the model received: the confirmed output, and the edited command's output, not the proposed one.
        const toolMessages = fx.fake.requests[1].messages.filter((m) => m.role === "tool").map((m) => String(m.content));
        expect(toolMessages).toHaveLength(2);
        expect(toolMessages[0]).toContain("web-confirmed");
        expect(toolMessages[1]).toContain("web-edited");
        expect(toolMessages.join("")).not.toContain("proposed");
        const generating = () => page.evaluate(() => document.body.dataset.generating);
        await until(generating).toBe("false");

        // Second turn: the socket is cut while the answer streams, and stays unreachable until it is finished.
        await page.fill("#input", "Tell me in parts.");
        await page.click("#send");
        await page.waitForSelector(".message.streaming >> text=Part one");
        const conversationId = decodeURIComponent(new URL(page.url()).hash.slice(1));
        sockets.dropAll();
        await until(() => page.textContent("#status")).toBe("reconnecting…");
        await until(async () => (await fx.client.conversation.get({ conversationId })).state.generating).toBe(false);
        sockets.allow();
        await until(() => page.textContent("#status"), { timeout: 8000 }).toBe("connected");

        const finalText = finalChunks.join("");
        await until(() => page.locator(".message.assistant", { hasText: "Part one" }).textContent()).toContain(finalText);
        // Resumed with afterSeq (a replay, not a reload): on the last socket, the page
        // subscribed after the last event it had seen and never re-read the conversation.
        const frames = sent.map((f) => JSON.parse(f) as { method?: string; params?: Record<string, unknown> });
        const lastSocket = frames.slice(frames.findLastIndex((f) => f.method === "initialize"));
        const resumed = lastSocket.find((f) => f.method === "conversation.subscribe");
        expect(resumed?.params, JSON.stringify(lastSocket)).toMatchObject({ conversationId, afterSeq: expect.any(Number) });
        expect(resumed!.params!.afterSeq).toBeGreaterThan(0);
        expect(lastSocket.filter((f) => f.method === "conversation.get")).toEqual([]);

        // Nothing doubled: exactly the stored messages, once each, and no streaming bubble left over.
        const got = await fx.client.conversation.get({ conversationId, includeRecords: true });
        const stored = got.records!.filter((r) => r.type === "message").map((r) => r.id);
        const shown = await page.locator(".message").evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.recordId));
        expect(shown).toEqual(stored);
        expect(await page.locator(".message", { hasText: finalText }).count()).toBe(1);
        expect(await page.locator(".tool-card").count()).toBe(2);
        await until(generating).toBe("false");

        // Third turn: the Interrupt button ends a reply that stalls mid-stream; its partial text is kept.
        fx.fake.enqueue({ kind: "reply", text: ["Thinking about", " it forever"], hangAfter: 1 });
        await page.fill("#input", "Think hard.");
        await page.click("#send");
        await page.waitForSelector(".message.streaming >> text=Thinking about");
        await page.click("#interrupt");
        await until(() => page.locator(".notice").last().textContent()).toBe("interrupted (streaming)");
        await until(generating).toBe("false");
        expect(await page.isVisible("#interrupt")).toBe(false);
        expect((await fx.client.conversation.get({ conversationId })).state.generating).toBe(false);
        await until(() => page.locator(".message.assistant").last().textContent()).toContain("Thinking about");
        expect(await page.locator(".message.streaming").count()).toBe(0);
        // The cut and the refused attempts are logged by Chromium; anything else is a page error.
        expect(errors.filter((e) => !e.startsWith("WebSocket connection to"))).toEqual([]);
      } finally {
        sockets.dispose();
        await page.context().close();
      }
    },
    30_000,
  );

  it("asks for the token when the server needs one, keeps it for reconnecting, and reloads when the missed events are gone (resync)", async () => {
    // Two events of replay log: a short absence already misses more than the server keeps.
    const server = await startTestServer({ server: { token: "web-secret" }, limits: { eventLogSize: 2 } }, { webDir: fx.webDir });
    const sockets = watchServerSockets(server.server.port);
    const { page, errors, sent } = await openPage(`${httpBase(server.url)}/`);
    try {
      const form = page.locator("#token-form");
      await until(() => form.isVisible()).toBe(true);
      expect(await page.textContent("#status")).toBe("cannot connect, retrying…");
      expect(sent).toEqual([]); // never got a socket to send on
      await page.fill("#token", "web-secret");
      await page.click("#token-form button");
      await until(() => page.textContent("#status")).toBe("connected");
      expect(await form.isVisible()).toBe(false);
      await page.click("#new");
      await page.waitForSelector("#conversations li.active");
      const conversationId = decodeURIComponent(new URL(page.url()).hash.slice(1));
      const other = await server.connectInMemory({ token: "web-secret" });
      expect((await other.conversation.list()).data.map((c) => c.id)).toEqual([conversationId]);
      await other.message.append({ conversationId, role: "user", content: "note 0" });
      await page.waitForSelector(".message.user >> text=note 0");

      // While the page is away, another client adds more than the replay log holds.
      sockets.dropAll();
      await until(() => page.textContent("#status")).toBe("reconnecting…");
      for (let i = 1; i <= 4; i++) await other.message.append({ conversationId, role: "user", content: `note ${i}` });
      sockets.allow();
      await until(() => page.textContent("#status"), { timeout: 8000 }).toBe("connected");
      await until(() => page.locator(".message.user").allTextContents()).toEqual(["usernote 0", "usernote 1", "usernote 2", "usernote 3", "usernote 4"]);

      const frames = sent.map((f) => JSON.parse(f) as { method?: string; params?: Record<string, unknown> });
      const lastSocket = frames.slice(frames.findLastIndex((f) => f.method === "initialize"));
      expect(lastSocket.map((f) => f.method).filter((m) => m?.startsWith("conversation.s") || m === "conversation.get")).toEqual([
        "conversation.subscribe",
        "conversation.get",
      ]);
      expect(lastSocket.find((f) => f.method === "conversation.subscribe")!.params!.afterSeq).toBeGreaterThan(0);
      // Every socket the page opened carried the token (the server refuses any other).
      expect(frames.filter((f) => f.method === "initialize").length).toBeGreaterThanOrEqual(2);
      expect(errors.filter((e) => !e.startsWith("WebSocket connection to"))).toEqual([]);
    } finally {
      sockets.dispose();
      await page.context().close();
      await server.close();
    }
  }, 30_000);
});
