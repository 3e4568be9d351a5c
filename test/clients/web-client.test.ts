/**
 * The web client, end to end: the server serves the bundled app (built here,
 * into a directory of this test's own, by the build that `npm run bundle:web`
 * runs), and a real
 * Chromium, driven by playwright-core, uses it against the fake model —
 * create a conversation, stream an answer, approve and edit tools on their
 * cards, lose the socket (dropped by the server's side of TCP) and come back
 * with nothing lost or doubled, and enter a token when the server needs one;
 * highlighted code and coloured diffs; the layout at phone (390 and 360 px)
 * and desktop widths, light and dark; the model and approval pickers; search,
 * rename and delete in the sidebar; the keyboard shortcuts; what the agent
 * is doing (issue 22): a file tool's change in its card before approval (and
 * a warning when it would fail), the turn's net change, the plan checklist
 * (also after a reload), the context meter and cost, notices; and control of a
 * turn (issue 23): steer and queue while the agent works, rewind with the
 * files and its undo, compaction; issue 24: question cards (ask_user), the
 * mode picker, sub-agents linked from their spawn_agent card.
 *
 * Screenshots (phone and desktop, light and dark) are written to
 * test-artifacts/web/ (gitignored) and their paths printed.
 *
 * Without /usr/bin/chromium the browser tests are skipped, and say so.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContextOptions, type Page } from "playwright-core";
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

/** Where the screenshots go (gitignored): the lead and the docs look at them. */
const ARTIFACTS = resolve(fileURLToPath(new URL("../../test-artifacts/web", import.meta.url)));

/** What the fake model costs (per million tokens). */
const PRICING = { inputPerMillion: 2, outputPerMillion: 8, currency: "USD" };

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
    // The fake model declares a context window and a price: the page's meter shows a share and a cost.
    { model: "fake-model", providers: { default: { baseUrl: "http://127.0.0.1:1/v1", models: { "fake-model": { contextWindow: 128_000, pricing: PRICING } } } } },
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
  async function openPage(url: string, options: BrowserContextOptions = {}): Promise<{ page: Page; errors: string[]; sent: string[] }> {
    const context = await browser.newContext(options);
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
    // It also started with a notice (what `initialize` lists): the page shows it once, however often it reconnects.
    const startNotice = { code: "config_untrusted" as const, message: "/project/agentwire.json is not trusted: its mcpServers were not applied." };
    const server = await startTestServer({ server: { token: "web-secret" }, limits: { eventLogSize: 2 }, notices: [startNotice] }, { webDir: fx.webDir });
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
      const shownNotices = page.locator('#notices .toast[data-code="config_untrusted"]');
      expect(await shownNotices.count()).toBe(1);
      expect(await shownNotices.getAttribute("class")).toBe("toast warning");
      expect(await shownNotices.locator(".toast-text").textContent()).toBe(startNotice.message);

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

  /** Runs one step of `conversationId` through the in-memory client and waits for it to end. */
  async function runStep(conversationId: string, content: string): Promise<void> {
    await fx.client.message.append({ conversationId, role: "user", content });
    await fx.client.step({ conversationId });
    await until(async () => (await fx.client.conversation.get({ conversationId })).state.generating).toBe(false);
  }

  /**
   * A conversation with what the page must lay out and colour: a long word, an edit_file and a
   * write_file call (auto-approved) whose diffs are on their records, and an answer with code
   * blocks in TypeScript, Python and an unknown language. Made once, for the tests that look at it.
   */
  let showcase: Promise<string> | undefined;
  const showcaseConversation = () =>
    (showcase ??= (async () => {
      const workspace = join(fx.tmp, "showcase");
      mkdirSync(join(workspace, "src"), { recursive: true });
      writeFileSync(join(workspace, "src/app.ts"), "export const port = 8080;\nexport const host = \"localhost\";\n");
      const created = await fx.client.conversation.create({ title: "Change the port", workspace, settings: { approval: "auto" } });
      fx.fake.enqueue(
        {
          kind: "reply",
          text: ["Changing it."],
          toolCalls: [
            { id: "call_edit", name: "edit_file", args: JSON.stringify({ path: "src/app.ts", old_string: "8080", new_string: "9090" }) },
            { id: "call_write", name: "write_file", args: JSON.stringify({ path: "NOTES.md", content: "# Notes\nport is 9090\n" }) },
          ],
        },
        {
          kind: "reply",
          text: [
            "Done. The port is now read like this:\n\n```ts\nconst port: number = Number(process.env.PORT ?? 9090); // default\n```\n\n",
            "and from Python:\n\n```python\ndef port() -> int:\n    return int(os.environ.get(\"PORT\", \"9090\"))\n```\n\n",
            "```nosuchlang\n<b>plain</b>\n```",
          ],
        },
      );
      await runStep(created.id, `Use port 9090 everywhere: ${"supercalifragilisticexpialidocious".repeat(3)} and /a/very/long/path/${"segment/".repeat(12)}`);
      return created.id;
    })());

  it("highlights code blocks with token spans, and shows a file tool's diff with a header per file, lines coloured, collapsible", async () => {
    const conversationId = await showcaseConversation();
    const { page, errors } = await openPage(`${httpBase(fx.server.url)}/#${conversationId}`);
    try {
      const edit = page.locator('[data-tool-call-id="call_edit"]');
      await until(() => edit.getAttribute("data-status")).toBe("completed");
      // One section per file, its header naming the file and counting the lines.
      const file = edit.locator(".diff-file");
      expect(await file.count()).toBe(1);
      expect(await file.locator(".diff-path").textContent()).toBe("src/app.ts");
      expect(await file.locator(".diff-stats").textContent()).toBe("+1−1");
      expect(await file.locator(".diff-del").allTextContents()).toEqual(["-export const port = 8080;\n"]);
      expect(await file.locator(".diff-add").allTextContents()).toEqual(["+export const port = 9090;\n"]);
      expect(await file.locator(".diff-hunk").count()).toBe(1);
      const colours = await file.evaluate((node) =>
        [".diff-add", ".diff-del", ".diff-context"].map((selector) => {
          const style = getComputedStyle(node.querySelector(selector)!);
          return `${style.color} on ${style.backgroundColor}`;
        }),
      );
      expect(new Set(colours).size, colours.join(" | ")).toBe(3);
      // A new file says so.
      const written = page.locator('[data-tool-call-id="call_write"] .diff-file');
      expect(await written.locator(".diff-path").textContent()).toBe("NOTES.md");
      expect(await written.locator(".diff-status").textContent()).toBe("new");
      // Collapsible: a click on the header folds the lines away.
      expect(await file.locator(".diff-body").isVisible()).toBe(true);
      await file.locator("summary").click();
      expect(await file.locator(".diff-body").isVisible()).toBe(false);

      // Code blocks: token spans for known languages, coloured unlike the plain text; unknown ones plain and escaped.
      const ts = page.locator("pre code.language-ts");
      await until(() => ts.locator("span.hljs-keyword").allTextContents()).toContain("const");
      expect(await ts.locator("span.hljs-comment").textContent()).toBe("// default");
      expect(await ts.locator("span.hljs-number").allTextContents()).toContain("9090");
      const [keyword, plain] = await ts.evaluate((code) => [getComputedStyle(code.querySelector(".hljs-keyword")!).color, getComputedStyle(code).color]);
      expect(keyword).not.toBe(plain);
      expect(await page.locator("pre code.language-python span.hljs-keyword").allTextContents()).toContain("def");
      const unknown = page.locator("pre code", { hasText: "<b>plain</b>" });
      expect(await unknown.locator("span").count()).toBe(0);
      expect(await page.locator(".messages b").count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);

  it("fits a phone (390 and 360 px): no horizontal overflow, the message box ≥ 80 % of the width, the list behind a toggle; the desktop shows it beside; light and dark screenshots", async () => {
    const conversationId = await showcaseConversation();
    await fx.client.conversation.create({ title: "Another conversation with a rather long title that must not push anything sideways" });
    mkdirSync(ARTIFACTS, { recursive: true });
    const shots: string[] = [];
    const layout = (page: Page) =>
      page.evaluate(() => ({
        innerWidth: window.innerWidth,
        scrollWidth: document.documentElement.scrollWidth,
        bodyScrollWidth: document.body.scrollWidth,
        input: document.getElementById("input")!.getBoundingClientRect().width,
        background: getComputedStyle(document.body).backgroundColor,
        unnamedButtons: Array.from(document.querySelectorAll("button")).filter((b) => !(b.getAttribute("aria-label") || b.textContent!.trim())).map((b) => b.outerHTML),
      }));
    const viewports = [
      { name: "phone", width: 390, height: 844, phone: true },
      { name: "phone-360", width: 360, height: 740, phone: true },
      { name: "desktop", width: 1280, height: 800, phone: false },
    ];
    // One page per viewport; the colour scheme is switched on it (emulateMedia) for the dark picture.
    for (const viewport of viewports) {
      const { page, errors } = await openPage(`${httpBase(fx.server.url)}/#${conversationId}`, {
        viewport: { width: viewport.width, height: viewport.height },
        colorScheme: "light",
        deviceScaleFactor: 1,
      });
      try {
        await page.waitForSelector('[data-tool-call-id="call_edit"]');
        await page.waitForSelector("pre code");
        const sidebar = page.locator("#sidebar");
        const toggle = page.locator("#toggle-sidebar");
        if (viewport.phone) {
          // The list first: behind the toggle, slides in within the screen, Escape closes it, picking a conversation too.
          expect(await sidebar.isVisible(), viewport.name).toBe(false);
          expect(await toggle.isVisible(), viewport.name).toBe(true);
          await toggle.click();
          await until(() => sidebar.isVisible()).toBe(true);
          expect(await toggle.getAttribute("aria-expanded")).toBe("true");
          await until(async () => (await sidebar.boundingBox())!.x).toBe(0); // slides in (0.15 s) to the left edge
          expect((await sidebar.boundingBox())!.width).toBeLessThanOrEqual(viewport.width);
          expect((await layout(page)).scrollWidth, `${viewport.name}, list open`).toBeLessThanOrEqual(viewport.width);
          const shot = join(ARTIFACTS, `${viewport.name}-list-open.png`);
          await page.screenshot({ path: shot });
          shots.push(shot);
          await page.keyboard.press("Escape");
          await until(() => sidebar.isVisible()).toBe(false);
          expect(await toggle.getAttribute("aria-expanded")).toBe("false");
          await toggle.click();
          await until(() => sidebar.isVisible()).toBe(true);
          await page.locator(`#conversations li[data-conversation-id="${conversationId}"] button.open`).click();
          await until(() => sidebar.isVisible()).toBe(false);
          await until(async () => (await sidebar.boundingBox())!.x + (await sidebar.boundingBox())!.width).toBeLessThanOrEqual(0);
        } else {
          expect(await sidebar.isVisible(), viewport.name).toBe(true);
          expect(await toggle.isVisible(), viewport.name).toBe(false);
        }
        for (const colorScheme of ["light", "dark"] as const) {
          await page.emulateMedia({ colorScheme });
          const where = `${viewport.name} ${colorScheme}`;
          const measured = await layout(page);
          expect(measured.scrollWidth, where).toBeLessThanOrEqual(measured.innerWidth);
          expect(measured.bodyScrollWidth, where).toBeLessThanOrEqual(measured.innerWidth);
          expect(measured.unnamedButtons, where).toEqual([]);
          if (viewport.phone) expect(measured.input, where).toBeGreaterThanOrEqual(0.8 * measured.innerWidth);
          else expect(measured.input, where).toBeGreaterThan(600);
          // Dark mode follows the system setting.
          const [r, g, b] = measured.background.match(/\d+/g)!.map(Number);
          if (colorScheme === "dark") expect(r + g + b, where).toBeLessThan(150);
          else expect(r + g + b, where).toBeGreaterThan(600);
          if (viewport.name === "phone-360" && colorScheme === "dark") continue;
          const shot = join(ARTIFACTS, `${viewport.name}-${colorScheme}.png`);
          await page.screenshot({ path: shot });
          shots.push(shot);
        }
        expect(errors, viewport.name).toEqual([]);
      } finally {
        await page.context().close();
      }
    }
    console.log(`web client screenshots:\n  ${shots.join("\n  ")}`);
  }, 60_000);

  it("lists the endpoint's models in the picker and the chosen one reaches the model request; the approval picker sets the conversation's mode", async () => {
    fx.fake.setModels(["fake-model", "other-model"]);
    const { page, errors } = await openPage(`${httpBase(fx.server.url)}/`);
    try {
      await until(() => page.textContent("#status")).toBe("connected");
      await page.click("#new");
      await page.waitForSelector("#conversations li.active");
      const conversationId = decodeURIComponent(new URL(page.url()).hash.slice(1));
      const picker = page.getByRole("combobox", { name: "Model" });
      await until(() => picker.locator("option").allTextContents()).toEqual(["default (fake-model)", "default/fake-model", "default/other-model"]);
      await picker.selectOption("default/other-model");
      await until(async () => (await fx.client.conversation.get({ conversationId })).conversation.model).toBe("default/other-model");

      const before = fx.fake.requests.length;
      fx.fake.enqueue({ kind: "reply", text: ["Answered by the other model."] });
      await page.fill("#input", "Which model?");
      await page.click("#send");
      await page.waitForSelector(".message.assistant >> text=Answered by the other model.");
      expect(fx.fake.requests.slice(before).map((r) => r.model)).toEqual(["other-model"]);

      // Back to the default: null on the conversation, the server's model in the request.
      await picker.selectOption("");
      await until(async () => (await fx.client.conversation.get({ conversationId })).conversation.model).toBe(null);

      await page.getByRole("combobox", { name: "Tools" }).selectOption("auto");
      await until(async () => (await fx.client.conversation.get({ conversationId })).conversation.settings.approval).toBe("auto");
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);

  it("searches the sidebar by title, renames and deletes (after a confirm) through it, and the server's list reflects both", async () => {
    const alpha = await fx.client.conversation.create({ title: "Alpha release notes" });
    const beta = await fx.client.conversation.create({ title: "Beta release plan" });
    const { page, errors } = await openPage(`${httpBase(fx.server.url)}/`);
    const titles = async () => new Map((await fx.client.conversation.list({ limit: 500 })).data.map((c) => [c.id, c.title]));
    try {
      await until(() => page.textContent("#status")).toBe("connected");
      const search = page.getByRole("searchbox", { name: "Search conversations by title" });
      await search.fill("release");
      await until(() => page.locator("#conversations button.open").allTextContents()).toEqual(["Beta release plan", "Alpha release notes"]);
      await search.fill("ALPHA");
      await until(() => page.locator("#conversations button.open").allTextContents()).toEqual(["Alpha release notes"]);

      await page.locator(`#conversations li[data-conversation-id="${alpha.id}"] button.open`).click();
      await page.waitForSelector(`#conversations li.active[data-conversation-id="${alpha.id}"]`);
      await page.getByRole("button", { name: "Rename “Alpha release notes”" }).click();
      const field = page.getByRole("textbox", { name: "New title" });
      expect(await field.inputValue()).toBe("Alpha release notes");
      await field.fill("Alpha shipped");
      // Another client changes the open conversation meanwhile (conversation_updated redraws the list): the edit survives it.
      await fx.client.conversation.update({ conversationId: alpha.id, settings: { approval: "auto" } });
      await until(() => page.locator("#approval").inputValue()).toBe("auto");
      expect(await field.inputValue()).toBe("Alpha shipped");
      await field.press("Enter");
      await until(async () => (await titles()).get(alpha.id)).toBe("Alpha shipped");
      await search.fill("");
      await until(() => page.locator(`#conversations li[data-conversation-id="${alpha.id}"] button.open`).textContent()).toBe("Alpha shipped");

      // Escape leaves the title as it was.
      await page.getByRole("button", { name: "Rename “Beta release plan”" }).click();
      await field.fill("not this");
      await field.press("Escape");
      expect((await titles()).get(beta.id)).toBe("Beta release plan");

      // Delete asks first: dismissed, nothing happens; accepted, it is gone from the server and the list.
      const dialogs: string[] = [];
      page.once("dialog", (dialog) => void (dialogs.push(dialog.message()), dialog.dismiss()));
      await page.getByRole("button", { name: "Delete “Beta release plan”" }).click();
      await until(() => dialogs.length).toBe(1);
      expect(dialogs[0]).toContain("Beta release plan");
      expect((await titles()).has(beta.id)).toBe(true);
      page.once("dialog", (dialog) => void dialog.accept());
      await page.getByRole("button", { name: "Delete “Beta release plan”" }).click();
      await until(async () => (await titles()).has(beta.id)).toBe(false);
      await until(() => page.locator(`#conversations li[data-conversation-id="${beta.id}"]`).count()).toBe(0);
      // Focus stays in the list (on the entry now in its place), not lost to the page.
      expect(await page.evaluate(() => document.activeElement?.closest("#conversations") !== null)).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);

  it("keyboard: Enter sends and Shift+Enter starts a new line; Alt+Y confirms and Alt+N skips the waiting tool call; Escape interrupts", async () => {
    fx.fake.enqueue(
      { kind: "reply", text: ["First."], toolCalls: [{ id: "call_key_y", name: "shell", args: JSON.stringify({ command: "echo by-key" }) }] },
      { kind: "reply", text: ["Second."], toolCalls: [{ id: "call_key_n", name: "shell", args: JSON.stringify({ command: "echo never" }) }] },
      { kind: "reply", text: ["All done."] },
      { kind: "reply", text: ["Going on", " and on"], hangAfter: 1 },
    );
    const { page, errors } = await openPage(`${httpBase(fx.server.url)}/`);
    try {
      await until(() => page.textContent("#status")).toBe("connected");
      await page.click("#new");
      await page.waitForSelector("#conversations li.active");
      const conversationId = decodeURIComponent(new URL(page.url()).hash.slice(1));
      await page.focus("#input");
      await page.keyboard.type("line one");
      await page.keyboard.press("Shift+Enter");
      await page.keyboard.type("line two");
      await page.keyboard.press("Enter");
      const confirmed = page.locator('[data-tool-call-id="call_key_y"]');
      await until(() => confirmed.getAttribute("data-status")).toBe("pending");
      const records = async () => (await fx.client.conversation.get({ conversationId, includeRecords: true })).records!;
      expect((await records()).find((r) => r.type === "message" && r.role === "user")).toMatchObject({ content: "line one\nline two" });
      // The hint is on the buttons.
      expect(await confirmed.getByRole("button", { name: "Confirm" }).getAttribute("aria-keyshortcuts")).toBe("Alt+Y");
      expect(await confirmed.getByRole("button", { name: "Skip" }).getAttribute("aria-keyshortcuts")).toBe("Alt+N");
      await page.keyboard.press("Alt+KeyY");
      await until(() => confirmed.getAttribute("data-status")).toBe("completed");
      expect(await confirmed.locator(".tool-output").textContent()).toContain("by-key");
      const skipped = page.locator('[data-tool-call-id="call_key_n"]');
      await until(() => skipped.getAttribute("data-status")).toBe("pending");
      await page.keyboard.press("Alt+KeyN");
      await until(() => skipped.getAttribute("data-status")).toBe("skipped");
      await page.waitForSelector(".message.assistant >> text=All done.");
      await until(() => page.evaluate(() => document.body.dataset.generating)).toBe("false");

      await page.fill("#input", "Keep going.");
      await page.keyboard.press("Enter");
      await page.waitForSelector(".message.streaming >> text=Going on");
      await page.keyboard.press("Escape");
      await until(() => page.locator(".notice").last().textContent()).toBe("interrupted (streaming)");
      expect((await fx.client.conversation.get({ conversationId })).state.generating).toBe(false);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);
  it(
    "shows a pending edit_file's change in its card before approval (coloured, collapsible), warns of an edit whose old string is missing, and shows the plan as a checklist that is still there after a reload",
    async () => {
      const workspace = join(fx.tmp, "pending");
      mkdirSync(join(workspace, "src"), { recursive: true });
      const original = 'export const port = 8080;\nexport const host = "localhost";\n';
      writeFileSync(join(workspace, "src/app.ts"), original);
      const created = await fx.client.conversation.create({ title: "Plan and change the port", workspace });
      const plan = [
        { content: "Read the configuration", status: "completed" },
        { content: "Change the port to 9090", status: "in_progress", priority: "high" },
        { content: "Run the tests", status: "pending" },
      ];
      fx.fake.enqueue(
        // update_plan runs by itself (it changes no file); the two edits wait for approval.
        { kind: "reply", text: ["Planning."], toolCalls: [{ id: "call_plan", name: "update_plan", args: JSON.stringify({ entries: plan }) }] },
        {
          kind: "reply",
          text: ["Changing it."],
          toolCalls: [
            { id: "call_pdiff", name: "edit_file", args: JSON.stringify({ path: "src/app.ts", old_string: "8080", new_string: "9090" }) },
            { id: "call_pbad", name: "edit_file", args: JSON.stringify({ path: "src/app.ts", old_string: "no such text", new_string: "x" }) },
          ],
        },
        { kind: "reply", text: ["Port changed."] },
      );
      const url = `${httpBase(fx.server.url)}/#${created.id}`;
      const { page, errors } = await openPage(url);
      const shots: string[] = [];
      try {
        await until(() => page.textContent("#status")).toBe("connected");
        await page.fill("#input", "Use port 9090.");
        await page.click("#send");

        /** The checklist as the page shows it, and as a screen reader reads it. */
        const checklist = (p: Page) =>
          p.locator(".plan-entry").evaluateAll((items) => items.map((li) => [(li as HTMLElement).dataset.status, li.textContent]));
        const expected = [
          ["completed", "✓completed: Read the configuration"],
          ["in_progress", "◐in progress: Change the port to 9090high"],
          ["pending", "○pending: Run the tests"],
        ];
        await until(() => checklist(page)).toEqual(expected);
        expect(await page.locator(".plan summary").textContent()).toBe("Plan1 of 3 done");
        expect(await page.getByRole("list", { name: "Plan steps" }).getByRole("listitem").count()).toBe(3);

        // The edit waits for approval, and its card already shows the change, coloured; nothing is written yet.
        const card = page.locator('[data-tool-call-id="call_pdiff"]');
        await until(() => card.getAttribute("data-status")).toBe("pending");
        expect(await card.locator(".tool-title").textContent()).toBe("Edit src/app.ts");
        expect(await card.locator(".tool-kind").textContent()).toBe("edit");
        expect(await card.locator(".tool-locations li").allTextContents()).toEqual(["src/app.ts"]);
        const file = card.locator(".tool-diff .diff-file");
        await until(() => file.locator(".diff-del").allTextContents()).toEqual(["-export const port = 8080;\n"]);
        expect(await file.locator(".diff-add").allTextContents()).toEqual(["+export const port = 9090;\n"]);
        expect(await card.locator(".tool-diff").getAttribute("data-shows")).toBe("proposed");
        const [added, removed] = await file.evaluate((node) => [".diff-add", ".diff-del"].map((s) => getComputedStyle(node.querySelector(s)!).backgroundColor));
        expect(added).not.toBe(removed);
        expect(readFileSync(join(workspace, "src/app.ts"), "utf8")).toBe(original);
        // The edit whose old string is not in the file says so before anyone approves it.
        const bad = page.locator('[data-tool-call-id="call_pbad"]');
        await until(() => bad.locator(".change-problem").textContent()).toContain("old_string was not found in src/app.ts");
        expect(await bad.locator(".change-problem").isVisible()).toBe(true);
        expect(await bad.evaluate((node) => node.classList.contains("will-fail"))).toBe(true);
        expect(await card.locator(".change-problem").count()).toBe(0);

        // After a reload: the plan, and the pending change (from state.pendingTools), are still there.
        await page.reload();
        await until(() => checklist(page)).toEqual(expected);
        await until(() => page.locator('[data-tool-call-id="call_pdiff"] .tool-diff .diff-add').allTextContents()).toEqual(["+export const port = 9090;\n"]);
        await until(() => page.locator('[data-tool-call-id="call_pbad"] .change-problem').count()).toBe(1);
        // …with the title, kind and locations the state's pending call carries (not just the tool's name).
        const reloaded = page.locator('[data-tool-call-id="call_pdiff"]');
        expect(await reloaded.locator(".tool-title").textContent()).toBe("Edit src/app.ts");
        expect(await reloaded.locator(".tool-kind").textContent()).toBe("edit");
        expect(await reloaded.locator(".tool-locations li").allTextContents()).toEqual(["src/app.ts"]);

        // The pending change under the plan fits a phone (no horizontal overflow), light and dark; screenshots of each.
        mkdirSync(ARTIFACTS, { recursive: true });
        for (const viewport of [
          { name: "phone", width: 390, height: 844 },
          { name: "phone-360", width: 360, height: 740 },
          { name: "desktop", width: 1280, height: 800 },
        ]) {
          const shot = await openPage(url, { viewport: { width: viewport.width, height: viewport.height }, colorScheme: "light", deviceScaleFactor: 1 });
          try {
            const pending = shot.page.locator('[data-tool-call-id="call_pdiff"]');
            await until(() => pending.locator(".diff-add").count()).toBe(1);
            await until(() => checklist(shot.page)).toEqual(expected);
            await pending.evaluate((node) => node.scrollIntoView({ block: "end" }));
            for (const colorScheme of ["light", "dark"] as const) {
              await shot.page.emulateMedia({ colorScheme });
              const width = await shot.page.evaluate(() => document.documentElement.scrollWidth);
              expect(width, `${viewport.name} ${colorScheme}`).toBeLessThanOrEqual(viewport.width);
              const path = join(ARTIFACTS, `${viewport.name}-pending-plan-${colorScheme}.png`);
              await shot.page.screenshot({ path });
              shots.push(path);
            }
            expect(shot.errors).toEqual([]);
          } finally {
            await shot.page.context().close();
          }
        }

        // Approve the one, skip the other: the card shows the diff the write made; the turn's panel the net change.
        await page.locator('[data-tool-call-id="call_pdiff"]').getByRole("button", { name: "Confirm" }).click();
        await page.locator('[data-tool-call-id="call_pbad"]').getByRole("button", { name: "Skip" }).click();
        await page.waitForSelector(".message.assistant >> text=Port changed.");
        const done = page.locator('[data-tool-call-id="call_pdiff"]');
        await until(() => done.getAttribute("data-status")).toBe("completed");
        expect(await done.locator(".tool-diff").getAttribute("data-shows")).toBe("result");
        expect(await page.locator('[data-tool-call-id="call_pbad"] .tool-diff').isVisible()).toBe(false);
        const turn = page.locator(".turn-changes");
        await until(() => turn.locator("> summary").textContent()).toBe("Changes in this turn1 file, +1 −1");
        expect(await turn.locator(".diff-body").isVisible()).toBe(false); // collapsed until opened
        await turn.locator("> summary").click();
        expect(await turn.locator(".diff-add").allTextContents()).toEqual(["+export const port = 9090;\n"]);
        // The panel ends its turn: after the turn's last message.
        expect(await turn.evaluate((node) => node.previousElementSibling?.textContent)).toContain("Port changed.");
        // A reload rebuilds it from the records.
        await page.reload();
        await until(() => page.locator(".turn-changes > summary").textContent()).toBe("Changes in this turn1 file, +1 −1");
        expect(await page.locator(".plan-entry").count()).toBe(3);
        expect(errors).toEqual([]);
        console.log(`web client issue-22 screenshots:\n  ${shots.join("\n  ")}`);
      } finally {
        await page.context().close();
      }
    },
    60_000,
  );

  it("shows the context meter and the cost after a turn, from usage_updated and, after a reload, from the stored totals; only the tokens for a model without a declared window or price", async () => {
    const created = await fx.client.conversation.create({ title: "Usage" });
    const { page, errors } = await openPage(`${httpBase(fx.server.url)}/#${created.id}`);
    try {
      await until(() => page.textContent("#status")).toBe("connected");
      await page.waitForSelector("#conversations li.active");
      expect(await page.locator("#usage").isVisible()).toBe(false); // no model call yet
      fx.fake.enqueue({ kind: "reply", text: ["Counted."], usage: { prompt_tokens: 12_000, completion_tokens: 345, total_tokens: 12_345 } });
      await page.fill("#input", "Count.");
      await page.click("#send");
      await page.waitForSelector(".message.assistant >> text=Counted.");
      const usage = page.getByRole("group", { name: "Context and cost" });
      // 12,345 of 128,000 tokens; (12,000 × 2 + 345 × 8) / 1e6 = 0.02676 USD.
      await until(() => usage.locator(".usage-context").textContent()).toBe("12.3K / 128K tokens (10 %)");
      expect(await usage.locator(".usage-cost").textContent()).toBe("turn $0.0268 · total $0.0268");
      const meter = usage.locator("meter");
      expect(await meter.evaluate((m: HTMLMeterElement) => [m.value, m.max])).toEqual([12_345, 128_000]);
      expect(await meter.getAttribute("aria-valuetext")).toBe("10 % of the context window (12,345 of 128,000 tokens)");

      // Reloaded: the conversation's stored totals and the model's declared window (models.list); no turn yet.
      await page.reload();
      await until(() => usage.locator(".usage-context").textContent()).toBe("12.3K / 128K tokens (10 %)");
      expect(await usage.locator(".usage-cost").textContent()).toBe("total $0.0268");

      // A model with no declared window or price: the token count alone, no meter, no cost (never guessed).
      fx.fake.setModels(["fake-model", "other-model"]);
      const plain = await fx.client.conversation.create({ title: "Usage, undeclared model", model: "default/other-model" });
      await page.goto(`${httpBase(fx.server.url)}/#${plain.id}`);
      await page.reload();
      await until(() => page.locator("#title").textContent()).toBe("Usage, undeclared model");
      expect(await usage.isVisible()).toBe(false);
      fx.fake.enqueue({ kind: "reply", text: ["Counted again."], usage: { prompt_tokens: 1000, completion_tokens: 234, total_tokens: 1234 } });
      await page.fill("#input", "Count.");
      await page.click("#send");
      await page.waitForSelector(".message.assistant >> text=Counted again.");
      await until(() => usage.locator(".usage-context").textContent()).toBe("1,234 tokens");
      expect(await usage.locator("meter").isVisible()).toBe(false);
      expect(await usage.locator(".usage-cost").isVisible()).toBe(false);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);

  it("shows a 429 then 200 as a model_retry notice (and the rate limit as a warning) in a live region, dismissible, and the turn completes", async () => {
    const created = await fx.client.conversation.create({ title: "Retry" });
    const { page, errors } = await openPage(`${httpBase(fx.server.url)}/#${created.id}`);
    try {
      await until(() => page.textContent("#status")).toBe("connected");
      await page.waitForSelector("#conversations li.active");
      fx.fake.enqueue(
        { kind: "error", status: 429, headers: { "retry-after-ms": "20", "x-ratelimit-remaining-requests": "0" }, message: "slow down" },
        { kind: "reply", text: ["After the retry."] },
      );
      await page.fill("#input", "Again.");
      await page.click("#send");
      await page.waitForSelector(".message.assistant >> text=After the retry.");
      const region = page.getByRole("status", { name: "Notices" });
      expect(await region.getAttribute("aria-live")).toBe("polite");
      const retry = region.locator('.toast[data-code="model_retry"]');
      await until(() => retry.count()).toBe(1);
      expect(await retry.getAttribute("class")).toBe("toast info");
      expect(await retry.locator(".toast-text").textContent()).toMatch(/retr/i);
      const limited = region.locator('.toast[data-code="rate_limited"]');
      expect(await limited.getAttribute("class")).toBe("toast warning");
      const [info, warning] = await Promise.all([retry, limited].map((t) => t.evaluate((n) => getComputedStyle(n).borderLeftColor)));
      expect(info).not.toBe(warning);
      await until(() => page.locator("#usage .usage-context").textContent()).toMatch(/tokens/);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "desktop-notices.png") });
      await retry.getByRole("button", { name: "Dismiss this notice" }).click();
      await until(() => retry.count()).toBe(0);
      expect(await limited.count()).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);

  // Issue 23: a conversation the user can correct while it runs (steer, queue) and take back afterwards (rewind, compact).

  it("while the agent works, Enter steers (the next model request carries it, after the tool result) and Alt+Enter queues a pending bubble that runs after; a held message can be removed", async () => {
    const created = await fx.client.conversation.create({ title: "Steer and queue" });
    fx.fake.enqueue(
      { kind: "reply", text: ["Looking."], toolCalls: [{ id: "call_steer", name: "shell", args: JSON.stringify({ command: "echo steer-tool" }) }] },
      { kind: "reply", text: ["Steered answer."] },
      { kind: "reply", text: ["Queued answer."] },
    );
    // At the narrowest phone width, dark: the pending bubbles must fit too.
    const { page, errors, sent } = await openPage(`${httpBase(fx.server.url)}/#${created.id}`, { viewport: { width: 360, height: 740 }, colorScheme: "dark" });
    try {
      await until(() => page.textContent("#status")).toBe("connected");
      await page.fill("#input", "Look around.");
      await page.keyboard.press("Enter");
      // The tool call waits for approval: the generation runs, and the message box stays usable.
      const card = page.locator('[data-tool-call-id="call_steer"]');
      await until(() => card.getAttribute("data-status")).toBe("pending");
      expect(await page.isDisabled("#send")).toBe(false);
      expect(await page.textContent("#send")).toBe("Steer");
      expect(await page.isVisible("#queue")).toBe(true);
      expect(await page.textContent("#shortcuts")).toContain("Alt+Enter");
      const before = fx.fake.requests.length;

      await page.fill("#input", "Also mention cats.");
      await page.keyboard.press("Enter");
      const steered = page.locator('.held-messages .message[data-delivery="steer"]', { hasText: "Also mention cats." });
      await until(() => steered.count()).toBe(1);
      await page.fill("#input", "Then list dogs.");
      await page.keyboard.press("Alt+Enter");
      const queued = page.locator('.held-messages .message[data-delivery="queue"]', { hasText: "Then list dogs." });
      await until(() => queued.count()).toBe(1);
      await page.fill("#input", "Drop me.");
      await page.click("#queue");
      const dropped = page.locator(".held-messages .message", { hasText: "Drop me." });
      await until(() => dropped.count()).toBe(1);
      await dropped.getByRole("button", { name: /Remove the waiting message/ }).click();
      await until(() => dropped.count()).toBe(0);
      expect((await fx.client.queue.list({ conversationId: created.id })).messages.map((m) => m.record.content)).toEqual(["Also mention cats.", "Then list dogs."]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "phone-360-dark-held.png") });
      // Sent with the guard and an id that makes a retry safe.
      const appends = sent.map((f) => JSON.parse(f)).filter((f) => f.method === "message.append").map((f) => f.params);
      expect(appends.at(-2)).toMatchObject({ content: "Then list dogs.", delivery: "queue", expectedGenerationId: expect.any(String), clientMessageId: expect.any(String) });
      expect(appends.find((p) => p.content === "Also mention cats.")).toMatchObject({ delivery: "steer", expectedGenerationId: expect.any(String) });

      await card.getByRole("button", { name: "Confirm" }).click();
      // The steered message is in the next request, after the tool result; then the queued one runs as a turn of its own.
      await page.waitForSelector(".messages .message.assistant >> text=Queued answer.");
      const next = fx.fake.messagesOf(before);
      const toolAt = next.findIndex((m) => m.role === "tool");
      const steerAt = next.findIndex((m) => m.role === "user" && String(m.content).includes("Also mention cats."));
      expect(toolAt).toBeGreaterThan(-1);
      expect(steerAt).toBeGreaterThan(toolAt);
      expect(JSON.stringify(fx.fake.messagesOf(before + 1).at(-1))).toContain("Then list dogs.");
      expect(fx.fake.requests.length).toBe(before + 2);
      // Both became ordinary bubbles, in the order the model saw them; nothing is held.
      await until(() => page.locator(".messages .message.user .content").allTextContents()).toEqual(["Look around.", "Also mention cats.", "Then list dogs."]);
      expect(await page.locator(".held-messages .message").count()).toBe(0);
      await until(() => page.evaluate(() => document.body.dataset.generating)).toBe("false");
      expect(await page.isVisible("#queue")).toBe(false);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);

  it("rewinds to a user message with its files restored (the later bubbles go, the edit is undone on disk; a file changed by hand since only with force), and Undo rewind brings both back", async () => {
    const workspace = join(fx.tmp, "rewind");
    mkdirSync(join(workspace, "src"), { recursive: true });
    const original = "export const port = 8080;\n";
    writeFileSync(join(workspace, "src/app.ts"), original);
    const created = await fx.client.conversation.create({ title: "Rewind", workspace, settings: { approval: "auto" } });
    fx.fake.enqueue({ kind: "reply", text: ["Hi."] });
    await runStep(created.id, "Hello.");
    fx.fake.enqueue(
      { kind: "reply", text: ["Changing it."], toolCalls: [{ id: "call_rw", name: "edit_file", args: JSON.stringify({ path: "src/app.ts", old_string: "8080", new_string: "9090" }) }] },
      { kind: "reply", text: ["Port changed."] },
    );
    await runStep(created.id, "Use port 9090.");
    expect(readFileSync(join(workspace, "src/app.ts"), "utf8")).toContain("9090");
    // Changed by hand since the tool wrote it: the rewind leaves it, and offers to restore it anyway.
    const edited = "export const port = 9090; // by hand\n";
    writeFileSync(join(workspace, "src/app.ts"), edited);
    const { page, errors } = await openPage(`${httpBase(fx.server.url)}/#${created.id}`, { viewport: { width: 390, height: 844 } });
    try {
      await page.waitForSelector(".message.assistant >> text=Port changed.");
      const target = page.locator(".message.user", { hasText: "Use port 9090." });
      await target.getByRole("button", { name: "Rewind to here" }).click();
      const confirm = target.getByRole("group", { name: "Rewind" });
      expect(await confirm.getByRole("checkbox").isChecked()).toBe(true);
      await confirm.getByRole("button", { name: "Rewind", exact: true }).click();
      await until(() => page.locator(".messages .message .content").evaluateAll((nodes) => nodes.map((n) => n.textContent!.trim()))).toEqual(["Hello.", "Hi."]);
      expect(await page.locator('[data-tool-call-id="call_rw"]').count()).toBe(0);
      const result = page.locator(".rewind-result");
      await until(() => result.locator(".not-restored").textContent()).toContain("src/app.ts");
      expect(readFileSync(join(workspace, "src/app.ts"), "utf8")).toBe(edited);
      await result.getByRole("button", { name: /force/ }).click();
      await until(() => result.locator(".restored").textContent()).toContain("src/app.ts");
      expect(await result.locator(".not-restored").count()).toBe(0);
      expect(readFileSync(join(workspace, "src/app.ts"), "utf8")).toBe(original);
      expect(await page.locator(".messages .message").count()).toBe(2);
      expect(await result.textContent()).toContain("records taken back");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "phone-rewound.png") });

      await result.getByRole("button", { name: "Undo rewind" }).click();
      await page.waitForSelector(".message.assistant >> text=Port changed.");
      expect(await page.locator('[data-tool-call-id="call_rw"]').count()).toBe(1);
      expect(readFileSync(join(workspace, "src/app.ts"), "utf8")).toBe(edited);
      await until(() => result.textContent()).toContain("Rewind undone");
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);

  it("compacts from the header with instructions: progress while the model summarizes, then a collapsible summary block (also after a reload)", async () => {
    const created = await fx.client.conversation.create({ title: "Compact" });
    fx.fake.enqueue({ kind: "reply", text: ["Hi there."] });
    await runStep(created.id, "Hello, my name is Ada.");
    const { page, errors } = await openPage(`${httpBase(fx.server.url)}/#${created.id}`);
    try {
      await page.waitForSelector(".message.assistant >> text=Hi there.");
      const before = fx.fake.requests.length;
      fx.fake.enqueue({ kind: "reply", text: ["The user ", "is Ada", " and said hello."], delayMs: 150 });
      page.once("dialog", (dialog) => void dialog.accept("keep the name"));
      await page.click("#compact");
      await page.waitForSelector(".notice.compacting");
      const block = page.locator("details.compaction");
      await until(() => block.count()).toBe(1);
      expect(await page.locator(".notice.compacting").count()).toBe(0);
      expect(await block.locator("summary").textContent()).toMatch(/^Summary of earlier conversation/);
      expect(await block.getAttribute("open")).toBeNull();
      await block.locator("summary").click();
      expect(await block.locator(".content").textContent()).toContain("The user is Ada and said hello.");
      expect(JSON.stringify(fx.fake.messagesOf(before))).toContain("keep the name");
      await page.reload();
      await until(() => page.locator("details.compaction .content").textContent()).toContain("is Ada");
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);

  // Issue 24: a `/` command menu, and approvals the user can remember or decline with a reason.

  it("offers the workspace's commands after `/` (keyboard listbox) and sends `/review file` as a command the model gets expanded; Always allow on `git status` runs the next `git status …` without asking; a skip reason reaches the model", async () => {
    const workspace = join(fx.tmp, "slash");
    mkdirSync(join(workspace, ".agentwire/commands"), { recursive: true });
    writeFileSync(join(workspace, ".agentwire/commands/review.md"), "---\ndescription: Review one file\nargument-hint: <file>\n---\nPlease review $1 carefully.\n");
    writeFileSync(join(workspace, ".agentwire/commands/explain.md"), "---\ndescription: Explain the code\n---\nExplain $ARGUMENTS.\n");
    const created = await fx.client.conversation.create({ title: "Slash and scopes", workspace });
    const before = fx.fake.requests.length;
    fx.fake.enqueue(
      { kind: "reply", text: ["Checking."], toolCalls: [{ id: "call_git_1", name: "shell", args: JSON.stringify({ command: "git status" }) }] },
      {
        kind: "reply",
        text: ["Again."],
        toolCalls: [
          { id: "call_git_2", name: "shell", args: JSON.stringify({ command: "git status --short" }) },
          { id: "call_echo", name: "shell", args: JSON.stringify({ command: "echo skip-me" }) },
        ],
      },
      { kind: "reply", text: ["Reviewed."] },
    );
    const { page, errors, sent } = await openPage(`${httpBase(fx.server.url)}/#${created.id}`, { viewport: { width: 360, height: 740 } });
    try {
      await until(() => page.textContent("#status")).toBe("connected");
      await page.focus("#input");
      await page.keyboard.type("/");
      const menu = page.getByRole("listbox", { name: "Commands" });
      await until(() => menu.getByRole("option").allTextContents()).toEqual(["/explainExplain the code", "/review<file>Review one file"]);
      await page.keyboard.press("ArrowDown");
      expect(await page.getAttribute("#input", "aria-activedescendant")).toBe("command-option-review");
      expect(await menu.getByRole("option", { selected: true }).textContent()).toContain("/review");
      await page.keyboard.press("Enter"); // takes the entry, sends nothing
      expect(await page.inputValue("#input")).toBe("/review ");
      expect(await menu.isHidden()).toBe(true);
      await page.keyboard.type("src/app.ts");
      await page.keyboard.press("Enter");
      // The command and its arguments go to the server; the model gets the expanded text; the bubble shows both.
      const card1 = page.locator('[data-tool-call-id="call_git_1"]');
      await until(() => card1.getAttribute("data-status")).toBe("pending");
      const appends = sent.map((f) => JSON.parse(f)).filter((f) => f.method === "message.append").map((f) => f.params);
      expect(appends.at(-1)).toMatchObject({ command: "review", arguments: "src/app.ts" });
      expect(appends.at(-1).content).toBeUndefined();
      expect(JSON.stringify(fx.fake.messagesOf(before))).toContain("Please review src/app.ts carefully.");
      const bubble = page.locator(".messages .message.user");
      expect(await bubble.locator(".command-tag").textContent()).toBe("/review src/app.ts");
      expect(await bubble.locator(".content").textContent()).toContain("Please review src/app.ts carefully.");

      // Always allow, with the rule in words and a choice of scope.
      const scope = card1.getByRole("combobox", { name: /Always allow/ });
      expect(await scope.locator("option").allTextContents()).toEqual(["`git status`-like commands in this conversation", "`git status`-like commands in this workspace"]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      await card1.getByRole("button", { name: "Always allow" }).click();
      await until(() => card1.getAttribute("data-status")).not.toBe("pending");
      expect((await fx.client.conversation.get({ conversationId: created.id })).conversation.settings.approvalRules).toEqual([{ tool: "shell", prefix: "git status" }]);
      // The next `git status …` runs without asking; `echo` still asks, and is skipped with a reason.
      const echo = page.locator('[data-tool-call-id="call_echo"]');
      await until(() => echo.getAttribute("data-status")).toBe("pending");
      expect(await page.locator('[data-tool-call-id="call_git_2"]').getAttribute("data-status")).not.toBe("pending");
      await echo.getByRole("textbox", { name: /Reason for skipping/ }).fill("not on this machine");
      await echo.getByRole("button", { name: "Skip" }).click();
      await page.waitForSelector(".messages .message.assistant >> text=Reviewed.");
      const confirms = sent.map((f) => JSON.parse(f)).filter((f) => f.method === "tool.confirm").map((f) => f.params);
      expect(confirms.map(({ toolCallId, action, remember, message }) => ({ toolCallId, action, remember, message }))).toEqual([
        { toolCallId: "call_git_1", action: "confirm", remember: "conversation", message: undefined },
        { toolCallId: "call_echo", action: "skip", remember: undefined, message: "not on this machine" },
      ]);
      const toolResults = fx.fake.messagesOf(before + 2).filter((m) => m.role === "tool").map((m) => String(m.content));
      expect(toolResults.find((c) => c.includes("not on this machine"))).toBeDefined();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);

  it("issue 24: question cards (choices, shown again after a reload; a secret that leaves no trace in the page; a schema form; answered in another client), the mode picker both ways, and a spawn_agent card linking to the sub-agent, nested in the list, whose own tool call is confirmed there", async () => {
    const created = await fx.client.conversation.create({ title: "Ask and delegate" });
    const conversationId = created.id;
    const secret = "hunter2-very-secret";
    const before = fx.fake.requests.length;
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_ask", name: "ask_user", args: JSON.stringify({ question: "Which colour?", choices: ["red", "blue"] }) }] },
      { kind: "reply", toolCalls: [{ id: "call_secret", name: "ask_user", args: JSON.stringify({ question: "The deploy token?", secret: true }) }] },
      {
        kind: "reply",
        toolCalls: [
          {
            id: "call_form",
            name: "ask_user",
            args: JSON.stringify({
              question: "Release details?",
              schema: {
                type: "object",
                properties: {
                  version: { type: "string", title: "Version" },
                  build: { type: "integer", title: "Build number" },
                  channel: { type: "string", enum: ["beta", "stable"], enumNames: ["Beta", "Stable"] },
                  notify: { type: "boolean", title: "Notify users" },
                },
                required: ["version", "build"],
              },
            }),
          },
        ],
      },
      { kind: "reply", toolCalls: [{ id: "call_elsewhere", name: "ask_user", args: JSON.stringify({ question: "Proceed?" }) }] },
      { kind: "reply", toolCalls: [{ id: "call_spawn", name: "spawn_agent", args: JSON.stringify({ prompt: "Say hi with the shell." }) }] },
      // The child's two model calls, then the parent's last.
      { kind: "reply", toolCalls: [{ id: "call_child_sh", name: "shell", args: JSON.stringify({ command: "echo child-hi" }) }] },
      { kind: "reply", text: ["Hi from the child."] },
      { kind: "reply", text: ["All done."] },
    );
    const { page, errors, sent } = await openPage(`${httpBase(fx.server.url)}/#${conversationId}`);
    try {
      page.setDefaultTimeout(8000);
      await until(() => page.textContent("#status")).toBe("connected");
      // The mode picker: modes.list's names, the default selected; a switch is stored; another client's switch shows.
      const modePicker = page.getByRole("combobox", { name: "Mode", exact: true });
      await until(() => modePicker.locator("option").allTextContents()).toEqual(["Ask", "Plan", "Code", "Auto"]);
      expect(await modePicker.inputValue()).toBe("code");
      await modePicker.selectOption("plan");
      await until(async () => (await fx.client.conversation.get({ conversationId })).conversation.settings.mode).toBe("plan");
      await fx.client.conversation.update({ conversationId, mode: "code" });
      await until(() => modePicker.inputValue()).toBe("code");

      await page.fill("#input", "Pick a colour");
      await page.click("#send");
      const card = page.locator('.question-card[data-tool-call-id="call_ask"]');
      await card.waitFor();
      expect(await card.locator(".question-text").textContent()).toBe("Which colour?");
      // After a reload the open question comes back from state.pendingInputs.
      await page.reload();
      await until(() => page.textContent("#status")).toBe("connected");
      await card.getByRole("group", { name: "Choices" }).getByRole("button", { name: "blue" }).click();
      await until(() => card.getAttribute("data-state")).toBe("answered");
      expect(await card.locator(".question-status").textContent()).toBe("Answered.");
      expect(sent.map((f) => JSON.parse(f)).find((f) => f.method === "input.respond")?.params).toMatchObject({ conversationId, action: "answer", answer: "blue" });

      // The secret: a password field, cleared as it is sent; nowhere in the page after.
      const secretCard = page.locator('.question-card[data-tool-call-id="call_secret"]');
      const field = secretCard.getByLabel("Secret answer");
      expect(await field.getAttribute("type")).toBe("password");
      await field.fill(secret);
      await secretCard.getByRole("button", { name: "Answer" }).click();
      await until(() => secretCard.getAttribute("data-state")).toBe("answered");
      // The model got both answers (the secret in this generation's calls only).
      await until(() => fx.fake.requests.length).toBeGreaterThan(before + 2);
      expect(JSON.stringify(fx.fake.messagesOf(before + 1))).toContain("blue");
      expect(JSON.stringify(fx.fake.messagesOf(before + 2))).toContain(secret);

      // A form from the schema: labelled fields, required ones marked and checked before sending.
      const form = page.locator('.question-card[data-tool-call-id="call_form"]');
      await form.waitFor();
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "question-form.png") });
      console.log(`screenshot: ${join(ARTIFACTS, "question-form.png")}`);
      expect(await form.getByLabel("Version").getAttribute("aria-required")).toBe("true");
      expect(await form.getByLabel("Channel").locator("option").allTextContents()).toEqual(["—", "Beta", "Stable"]);
      await form.getByLabel("Version").fill("2.1.0");
      await form.getByRole("button", { name: "Answer" }).click();
      await until(() => form.getByRole("alert").textContent()).toBe("Required: Build number");
      await form.getByLabel("Build number").fill("42");
      await form.getByLabel("Channel").selectOption("stable");
      await form.getByLabel("Notify users").check();
      await form.getByRole("button", { name: "Answer" }).click();
      await until(() => form.getAttribute("data-state")).toBe("answered");
      expect(sent.map((f) => JSON.parse(f)).filter((f) => f.method === "input.respond").at(-1)?.params.answer).toEqual({ version: "2.1.0", build: 42, channel: "stable", notify: true });
      // Answered by another client: the card closes and says so.
      const elsewhere = page.locator('.question-card[data-tool-call-id="call_elsewhere"]');
      await elsewhere.waitFor();
      const { pendingInputs } = (await fx.client.conversation.get({ conversationId })).state;
      await fx.client.input.respond({ conversationId, requestId: (pendingInputs ?? [])[0]!.requestId, answer: "yes" });
      await until(() => elsewhere.locator(".question-status").textContent()).toBe("Answered in another client.");

      // spawn_agent: confirmed on its card, which then links to the child.
      const spawn = page.locator('[data-tool-call-id="call_spawn"]');
      await until(() => spawn.getAttribute("data-status")).toBe("pending");
      await spawn.getByRole("button", { name: "Confirm" }).click();
      const link = spawn.getByRole("link", { name: "Open the sub-agent's conversation" });
      await link.waitFor();
      const childId = await link.getAttribute("data-conversation-id");
      expect(childId).toBeTruthy();
      expect(await page.content()).not.toContain(secret);
      const listed = page.locator(`#conversations li[data-conversation-id="${childId}"]`);
      await listed.waitFor();
      expect(await listed.getAttribute("data-parent-id")).toBe(conversationId);
      // Right under its parent.
      expect(await page.locator(`#conversations li[data-conversation-id="${conversationId}"] + li`).getAttribute("data-conversation-id")).toBe(childId);
      await page.screenshot({ path: join(ARTIFACTS, "subagent-link.png") });
      console.log(`screenshot: ${join(ARTIFACTS, "subagent-link.png")}`);
      await link.click();
      await until(() => decodeURIComponent(new URL(page.url()).hash.slice(1))).toBe(childId);
      const childCall = page.locator('[data-tool-call-id="call_child_sh"]');
      await until(() => childCall.getAttribute("data-status")).toBe("pending");
      await childCall.getByRole("button", { name: "Confirm" }).click();
      await page.waitForSelector(".message.assistant >> text=Hi from the child.");
      await until(async () => (await fx.client.conversation.get({ conversationId })).state.generating).toBe(false);
      const records = (await fx.client.conversation.get({ conversationId, includeRecords: true })).records ?? [];
      expect(JSON.stringify(records)).not.toContain(secret);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 30_000);
});
