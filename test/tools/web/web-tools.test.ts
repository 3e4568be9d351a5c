/**
 * The web tools against local HTTP servers (nothing leaves the machine):
 * web_fetch returns readable text within its limits and refuses what is not
 * text or not http(s); web_search reads SearXNG and Brave answers and
 * reports their failures; both end to end through the protocol.
 */
import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configuredTools } from "../../../src/tools/configured-tools.js";
import type { Tool, ToolResult } from "../../../src/tools/tool.js";
import { ToolConfigError } from "../../../src/tools/tool-config-error.js";
import { braveBackend, searxngBackend } from "../../../src/tools/web/search-backends.js";
import { createWebFetchTool } from "../../../src/tools/web/web-fetch.js";
import { createWebSearchTool } from "../../../src/tools/web/web-search.js";
import { newConversation, startAgentFixture } from "../../harness/agent-fixture.js";
import { endlessBody, startFakeWebServer, type FakeWebServer } from "../../harness/fake-web-server.js";

const PAGE = `<!doctype html><html><head><title>Fake &amp; Page</title><style>body{color:red}</style><script>alert(1)</script></head>
<body><h1>Hello web</h1><p>Some <b>bold</b> text and <a href="/next">a link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`;

const SEARX_ANSWER = {
  query: "agentwire",
  results: [
    { title: "Agentwire docs", url: "https://example.test/docs", content: "How to  run\nagents." },
    { title: "Second", url: "https://example.test/2", content: "" },
    { title: "Third", url: "https://example.test/3", content: "three" },
  ],
};
const BRAVE_ANSWER = {
  type: "search",
  web: { results: [{ title: "<strong>Brave</strong> result", url: "https://brave.test/a", description: "A &amp; B <strong>match</strong>" }] },
};
const BRAVE_KEY = "brave-test-key";

let web: FakeWebServer;
beforeAll(async () => {
  web = await startFakeWebServer({
    "/page.html": (_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE),
    "/data.json": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"answer": 42, "list": [1, 2]}'),
    "/feed.xml": (_req, res) => res.writeHead(200, { "content-type": "application/rss+xml" }).end("<rss><item>x</item></rss>"),
    "/latin1.txt": (_req, res) => res.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" }).end(Buffer.from([0x63, 0x61, 0x66, 0xe9])),
    "/image.png": (_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(Buffer.alloc(4096, 0x89)),
    "/binary": (_req, res) => res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.alloc(64)),
    "/gzip.txt": (_req, res) => res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" }).end(gzipSync("zipped text")),
    "/br.txt": (_req, res) => res.writeHead(200, { "content-type": "text/plain", "content-encoding": "br" }).end(brotliCompressSync("brotli text")),
    "/missing": (_req, res) => res.writeHead(404, { "content-type": "text/plain" }).end("nothing here"),
    "/endless.txt": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      endlessBody(res, "0123456789abcdef".repeat(1024));
    },
    "/slow-headers": () => {
      /* never answers */
    },
    "/slow-body": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first part\n");
    },
    "/r/1": (_req, res) => res.writeHead(302, { location: "/r/2" }).end(),
    "/r/2": (_req, res) => res.writeHead(301, { location: "/data.json" }).end(),
    "/loop": (_req, res) => res.writeHead(302, { location: "/loop" }).end(),
    "/to-file": (_req, res) => res.writeHead(302, { location: "file:///etc/passwd" }).end(),
    "/searx/search": (_req, res, url) => {
      if (url.searchParams.get("format") !== "json") return void res.writeHead(403).end("format not allowed");
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(SEARX_ANSWER));
    },
    "/brave/search": (req, res) => {
      if (req.headers["x-subscription-token"] !== BRAVE_KEY) {
        return void res.writeHead(401, { "content-type": "application/json" }).end('{"error": "invalid subscription token"}');
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(BRAVE_ANSWER));
    },
    "/error/search": (_req, res) => res.writeHead(500, { "content-type": "text/html" }).end("<h1>Internal   Server Error</h1>\n" + "x".repeat(2000)),
    "/badjson/search": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("<html>not json</html>"),
    "/noresults/search": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"results": []}'),
    "/hang/search": () => {
      /* never answers */
    },
  });
});
afterAll(async () => {
  await web?.close();
});

async function run(tool: Tool, args: Record<string, unknown>, options: { timeoutMs?: number; signal?: AbortSignal } = {}) {
  let streamed = "";
  const result: ToolResult = await tool.run(args, {
    cwd: process.cwd(),
    conversationId: "c_test",
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 10_000,
    onOutput: (_stream, chunk) => (streamed += chunk),
  });
  return { ...result, streamed };
}

describe("web_fetch", () => {
  // The fake server is on loopback, which web_fetch refuses unless allowed (web-private-network.test.ts).
  const local = { allowPrivateNetwork: ["127.0.0.1"] };
  const fetchTool = createWebFetchTool({ maxBytes: 64 * 1024, timeoutMs: 5000, ...local });

  it("returns HTML as markdown, with the URL, status, content type and title first", async () => {
    const result = await run(fetchTool, { url: `${web.url}/page.html` });
    expect(result.success).toBe(true);
    expect(result.output).toBe(
      [
        `URL: ${web.url}/page.html`,
        "Status: 200 OK",
        "Content-Type: text/html",
        "Title: Fake & Page",
        "",
        "# Hello web\n\nSome **bold** text and [a link](/next).\n\n* one\n* two",
      ].join("\n"),
    );
    expect(result.streamed).toContain(`GET ${web.url}/page.html\n`);
  });

  it("returns JSON, XML and other text as they are, decoding the declared charset", async () => {
    const json = await run(fetchTool, { url: `${web.url}/data.json` });
    expect(json).toMatchObject({ success: true });
    expect(json.output.endsWith('\n\n{"answer": 42, "list": [1, 2]}')).toBe(true);
    expect((await run(fetchTool, { url: `${web.url}/feed.xml` })).output).toContain("<rss><item>x</item></rss>");
    expect((await run(fetchTool, { url: `${web.url}/latin1.txt` })).output.endsWith("\n\ncafé")).toBe(true);
  });

  it("asks for gzip and brotli and decodes them", async () => {
    expect((await run(fetchTool, { url: `${web.url}/gzip.txt` })).output.endsWith("\n\nzipped text")).toBe(true);
    expect(web.requests.at(-1)!.headers["accept-encoding"]).toBe("gzip, br");
    expect((await run(fetchTool, { url: `${web.url}/br.txt` })).output.endsWith("\n\nbrotli text")).toBe(true);
  });

  it("refuses schemes other than http and https, and text that is not a URL", async () => {
    for (const url of ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hello", "javascript:alert(1)"]) {
      const result = await run(fetchTool, { url });
      expect(result.success).toBe(false);
      expect(result.output).toMatch(/^Only http:\/\/ and https:\/\/ URLs are fetched; .* is a [a-z]+: URL\.$/);
    }
    expect((await run(fetchTool, { url: "not a url" })).output).toBe('Not a valid URL: "not a url". Give an absolute http:// or https:// URL.');
    expect(web.requests.filter((r) => r.path.includes("passwd"))).toEqual([]);
  });

  it("refuses non-text content without reading its body", async () => {
    const png = await run(fetchTool, { url: `${web.url}/image.png` });
    expect(png.success).toBe(false);
    expect(png.output).toContain("Refused: image/png is not text. web_fetch returns HTML, plain text, JSON and XML only.");
    const octets = await run(fetchTool, { url: `${web.url}/binary` });
    expect(octets.output).toContain("Refused: application/octet-stream is not text.");
  });

  it("stops reading an endless body at maxBytes and says so; the model's text is cut to maxOutputBytes", async () => {
    const small = createWebFetchTool({ maxBytes: 32 * 1024, maxOutputBytes: 4096, timeoutMs: 5000, ...local });
    const started = Date.now();
    const result = await run(small, { url: `${web.url}/endless.txt` });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.success).toBe(true);
    expect(result.output).toContain("[the body is larger than 32768 bytes: reading stopped there, the text below is its start only]");
    expect(result.output).toContain("[text cut to its first 4096 of 32768 bytes]");
    expect(result.output.endsWith("\n\n" + "0123456789abcdef".repeat(256))).toBe(true);
    expect(result.streamed).toContain("32768 bytes (cut)");
  });

  it("follows redirects (at most 5) and reports the final URL; refuses a redirect to another scheme", async () => {
    const followed = await run(fetchTool, { url: `${web.url}/r/1` });
    expect(followed.success).toBe(true);
    expect(followed.output.split("\n").slice(0, 3)).toEqual([`URL: ${web.url}/data.json`, "Redirects: 2", "Status: 200 OK"]);
    expect(followed.output).toContain('"answer": 42');

    const loop = await run(fetchTool, { url: `${web.url}/loop` });
    expect(loop.success).toBe(false);
    expect(loop.output).toContain("Too many redirects (more than 5)");
    expect(web.requests.filter((r) => r.path === "/loop")).toHaveLength(6);

    const toFile = await run(fetchTool, { url: `${web.url}/to-file` });
    expect(toFile).toMatchObject({ success: false, output: `${web.url}/to-file redirected to file:///etc/passwd: only http and https URLs are fetched.` });
  });

  it("fails on an HTTP error status, with the status and the body", async () => {
    const result = await run(fetchTool, { url: `${web.url}/missing` });
    expect(result.success).toBe(false);
    expect(result.output).toContain("Status: 404 Not Found");
    expect(result.output).toContain("nothing here");
  });

  it("times out on a server that does not answer, at the smaller of its own and the conversation's limit", async () => {
    const quick = createWebFetchTool({ timeoutMs: 300, ...local });
    let started = Date.now();
    const own = await run(quick, { url: `${web.url}/slow-headers` });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(own).toMatchObject({ success: false, output: `Fetching ${web.url}/slow-headers timed out after 300 ms.` });

    started = Date.now();
    const capped = await run(fetchTool, { url: `${web.url}/slow-body` }, { timeoutMs: 250 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(capped.output).toBe(`Fetching ${web.url}/slow-body timed out after 250 ms.`);
  });

  it("aborts the request on interrupt, mid-body, and the server sees the connection go", async () => {
    const controller = new AbortController();
    const before = web.closedEarly.filter((p) => p === "/slow-body").length;
    setTimeout(() => controller.abort(), 150);
    const started = Date.now();
    const result = await run(fetchTool, { url: `${web.url}/slow-body` }, { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result).toMatchObject({ success: false, output: "[interrupted]" });
    await expect.poll(() => web.closedEarly.filter((p) => p === "/slow-body").length).toBe(before + 1);
  });

  it("reports an unreachable server clearly", async () => {
    const closed = await startFakeWebServer({});
    const url = `${closed.url}/x`;
    await closed.close();
    const result = await run(fetchTool, { url });
    expect(result.success).toBe(false);
    expect(result.output).toMatch(/^Fetching http:\/\/127\.0\.0\.1:\d+\/x failed: .*ECONNREFUSED/);
  });
});

describe("web_search", () => {
  it("reads SearXNG's JSON API and returns a numbered title / url / snippet list, capped at maxResults", async () => {
    const search = createWebSearchTool({ backend: searxngBackend(`${web.url}/searx`), maxResults: 2 });
    const result = await run(search, { query: "agentwire tools" });
    expect(result.success).toBe(true);
    expect(result.output).toBe(
      [
        'Results for "agentwire tools":',
        "",
        "1. Agentwire docs",
        "   https://example.test/docs",
        "   How to run agents.",
        "",
        "2. Second",
        "   https://example.test/2",
      ].join("\n"),
    );
    expect(web.requests.at(-1)!.path).toBe("/searx/search?q=agentwire+tools&format=json");
  });

  it("reads Brave's answer, sending the key as X-Subscription-Token; a wrong key is an HTTP error for the model", async () => {
    const brave = createWebSearchTool({ backend: braveBackend(`${web.url}/brave/search`, BRAVE_KEY) });
    const result = await run(brave, { query: "brave" });
    expect(result).toMatchObject({ success: true, output: 'Results for "brave":\n\n1. Brave result\n   https://brave.test/a\n   A & B match' });
    const request = web.requests.at(-1)!;
    expect(request.path).toBe("/brave/search?q=brave&count=8");
    expect(request.headers["x-subscription-token"]).toBe(BRAVE_KEY);

    const wrong = await run(createWebSearchTool({ backend: braveBackend(`${web.url}/brave/search`, "wrong") }), { query: "brave" });
    expect(wrong).toMatchObject({
      success: false,
      output: 'Search failed: the brave backend answered HTTP 401 Unauthorized: {"error": "invalid subscription token"}',
    });
  });

  it("reports HTTP errors (status and the start of the body), bad JSON, timeouts and no results clearly", async () => {
    const on = (path: string, timeoutMs = 5000) => createWebSearchTool({ backend: searxngBackend(`${web.url}${path}`), timeoutMs });
    const failed = await run(on("/error"), { query: "q" });
    expect(failed.success).toBe(false);
    expect(failed.output).toMatch(/^Search failed: the searxng backend answered HTTP 500 Internal Server Error: <h1>Internal Server Error<\/h1> x+$/);
    expect(failed.output.length).toBeLessThan(450);

    expect((await run(on("/badjson"), { query: "q" })).output).toMatch(
      /^Search failed: the searxng backend's answer is not valid JSON \(.+\): <html>not json<\/html>$/,
    );
    const started = Date.now();
    expect((await run(on("/hang", 300), { query: "q" })).output).toBe("Search timed out after 300 ms (searxng backend).");
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await run(on("/noresults"), { query: "q" })).toMatchObject({ success: true, output: 'No results for "q".' });
  });

  it("aborts on interrupt", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await run(createWebSearchTool({ backend: searxngBackend(`${web.url}/hang`) }), { query: "q" }, { signal: controller.signal });
    expect(result).toMatchObject({ success: false, output: "[interrupted]" });
  });
});

describe("configuration", () => {
  const build = (web: Parameters<typeof configuredTools>[0]["web"], env: NodeJS.ProcessEnv = {}) => configuredTools({ custom: [], web, envAllow: [] }, [], env);
  const startError = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(ToolConfigError);
      return (error as Error).message;
    }
    throw new Error("expected a ToolConfigError");
  };

  it("offers nothing unless enabled; both tools read-only, source web", () => {
    expect(build({})).toEqual([]);
    expect(build({ fetch: { enabled: false } })).toEqual([]);
    const tools = build({ fetch: { enabled: true }, search: { enabled: true, backend: "searxng", url: "http://127.0.0.1:1" } });
    expect(tools.map((t) => [t.name, t.source, t.annotations])).toEqual([
      ["web_fetch", "web", { readOnlyHint: true, destructiveHint: false }],
      ["web_search", "web", { readOnlyHint: true, destructiveHint: false }],
    ]);
  });

  it("refuses brave without a key, an unset apiKeyEnv, and searxng without a URL", () => {
    expect(startError(() => build({ search: { enabled: true, backend: "brave" } }))).toBe(
      "tools.web.search: the brave backend needs an API key: set apiKeyEnv to the name of the variable holding it (or apiKey)",
    );
    expect(startError(() => build({ search: { enabled: true, backend: "brave", apiKeyEnv: "BRAVE_KEY" } }))).toBe(
      "tools.web.search.apiKeyEnv: the environment variable BRAVE_KEY is not set (the brave backend needs its API key)",
    );
    expect(build({ search: { enabled: true, backend: "brave", apiKeyEnv: "BRAVE_KEY" } }, { BRAVE_KEY: "k" })).toHaveLength(1);
    expect(startError(() => build({ search: { enabled: true, backend: "searxng" } }))).toContain("tools.web.search.url: the searxng backend needs");
  });
});

describe("end to end through the protocol", () => {
  it("web_fetch and web_search (searxng) are listed, offered to the model, and their results reach it", async () => {
    const fx = await startAgentFixture({
      config: {
        tools: { web: { fetch: { enabled: true }, search: { enabled: true, backend: "searxng", url: `${web.url}/searx` }, allowPrivateNetwork: ["127.0.0.1"] } },
      },
    });
    try {
      const { tools } = await fx.client.tools.list();
      expect(tools.filter((t) => t.source === "web").map((t) => t.name)).toEqual(["web_fetch", "web_search"]);
      expect(tools.find((t) => t.name === "web_fetch")!.parameters).toMatchObject({ type: "object", required: ["url"], additionalProperties: false });

      fx.fake.enqueue(
        {
          kind: "reply",
          toolCalls: [
            { id: "call_s", name: "web_search", args: JSON.stringify({ query: "agentwire" }) },
            { id: "call_f", name: "web_fetch", args: JSON.stringify({ url: `${web.url}/page.html` }) },
          ],
        },
        { kind: "reply", text: ["Read it."] },
      );
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
      expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");

      expect(fx.fake.requests[0]!.tools!.map((t) => t.function.name)).toEqual(expect.arrayContaining(["web_fetch", "web_search"]));
      const toolMessages = fx.fake.requests[1]!.messages.filter((m) => m.role === "tool");
      expect(toolMessages.map((m) => m.tool_call_id)).toEqual(["call_s", "call_f"]);
      expect(toolMessages[0].content).toContain("1. Agentwire docs\n   https://example.test/docs");
      expect(toolMessages[1].content).toContain("# Hello web");
      expect(events.of("tool_completed").map((e) => e.record.toolName)).toEqual(["web_search", "web_fetch"]);
      expect(events.of("tool_output").some((o) => o.chunk.includes(`GET ${web.url}/page.html`))).toBe(true);
      expect(fx.fake.rejected).toEqual([]);
    } finally {
      await fx.close();
    }
  });

  it("web_search (brave) runs against a Brave-shaped endpoint with its key, through the protocol", async () => {
    const fx = await startAgentFixture({
      config: { tools: { web: { search: { enabled: true, backend: "brave", url: `${web.url}/brave/search`, apiKey: BRAVE_KEY } } } },
    });
    try {
      fx.fake.enqueue(
        { kind: "reply", toolCalls: [{ id: "call_b", name: "web_search", args: JSON.stringify({ query: "brave" }) }] },
        { kind: "reply", text: ["ok"] },
      );
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
      await events.waitForEnd(generationId);
      expect(fx.fake.requests[1]!.messages.at(-1)).toEqual({
        role: "tool",
        tool_call_id: "call_b",
        content: 'Results for "brave":\n\n1. Brave result\n   https://brave.test/a\n   A & B match',
      });
      expect(fx.fake.rejected).toEqual([]);
    } finally {
      await fx.close();
    }
  });
});
