/**
 * The OpenAI wires' streaming request sent without the SDK's per-request
 * machinery (openai-direct.ts, issue 27) must be the SDK's request and fail
 * as the SDK fails. Each case runs both ways against the same endpoint —
 * through the SDK over the same node:http transport (the path before), and
 * direct — and compares what the endpoint received and what the caller got.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeHttpFetch } from "../../src/llm/node-http-fetch.js";
import type { ChatRequest } from "../../src/llm/provider.js";
import { chatRequestBody, chatRequestJson, chatWire } from "../../src/llm/wires/chat-wire.js";
import { createResponsesWire } from "../../src/llm/wires/responses-wire.js";
import { directSender } from "../../src/llm/wires/openai-direct.js";
import type { Wire, WireClient } from "../../src/llm/wires/wire.js";

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let base: string;
let answer: Answer;
/** What the endpoint got; `raw` keeps the headers' order and case as they came. */
const received: { method?: string; url?: string; headers: Record<string, unknown>; raw: string[]; body: string }[] = [];
const http = createNodeHttpFetch();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const { host: _host, ...headers } = req.headers;
      received.push({ method: req.method, url: req.url, headers, raw: req.rawHeaders, body });
      answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  http.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const request = (signal: AbortSignal): ChatRequest => ({
  model: "m",
  messages: [{ role: "user", content: "héllo" }],
  tools: [{ name: "t", description: "a tool", parameters: { type: "object", properties: {} } }],
  temperature: 0.5,
  signal,
});

/** The two clients of one wire: through the SDK (fetch over node:http, as before), and direct. */
function clients(wire: Wire, baseURL = base, headers: Record<string, string> = { "X-Gateway": "g1" }): { sdk: WireClient; direct: WireClient } {
  const connection = { apiKey: "sk-test", baseURL, headers, fetch: http.fetch, timeoutMs: 600_000 };
  return { sdk: wire.connect(connection), direct: wire.connect({ ...connection, http }) };
}

/** What the caller sees of one send: the LlmError toLlmError makes (all its fields), or the response's status and body. */
async function outcome(client: WireClient, signal = new AbortController().signal): Promise<unknown> {
  try {
    const response = await client.send(request(signal), signal);
    const status = response instanceof Response ? response.status : response.statusCode;
    const body = response instanceof Response ? (response.body ? await response.text() : null) : await text(response);
    return { status, body };
  } catch (err) {
    const error = client.toLlmError(err);
    return { class: (err as Error).constructor.name, message: error.message, kind: error.kind, status: error.status, headers: error.headers, code: error.code };
  }
}

async function text(stream: AsyncIterable<Buffer | string>): Promise<string> {
  let all = "";
  for await (const chunk of stream) all += chunk.toString();
  return all;
}

async function both(wire: Wire = chatWire, baseURL?: string, headers?: Record<string, string>) {
  const { sdk, direct } = clients(wire, baseURL, headers);
  received.length = 0;
  const before = await outcome(sdk);
  const after = await outcome(direct);
  return { before, after, requests: [...received] };
}

const answers: Record<string, Answer> = {
  "400 with an error object and a code": (_q, res) => {
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "bad tools", type: "invalid_request_error", code: "invalid_value" } }));
  },
  "401 as plain text": (_q, res) => {
    res.writeHead(401, { "content-type": "text/plain" });
    res.end("no key");
  },
  "404 with JSON that has no error field": (_q, res) => {
    res.writeHead(404, { "content-type": "application/json" });
    res.end('{"detail":"not here"}');
  },
  "429 with retry-after and rate-limit headers": (_q, res) => {
    res.writeHead(429, { "retry-after": "3", "retry-after-ms": "2500", "x-ratelimit-remaining-requests": "0", "x-request-id": "r1" });
    res.end(JSON.stringify({ error: { message: "slow down" } }));
  },
  "500 with an empty body": (_q, res) => {
    res.writeHead(500);
    res.end();
  },
  "503 as HTML": (_q, res) => {
    res.writeHead(503, { "content-type": "text/html" });
    res.end("<html>down</html>");
  },
  "a JSON error body behind a byte-order mark": (_q, res) => {
    res.writeHead(422);
    res.end('\uFEFF{"error":{"message":"with bom"}}');
  },
  "a redirect (never followed)": (_q, res) => {
    res.writeHead(302, { location: "http://elsewhere.invalid/" });
    res.end();
  },
  "304": (_q, res) => {
    res.writeHead(304);
    res.end();
  },
  "the connection closed before any answer": (req) => {
    req.socket.destroy();
  },
  "a stream": (_q, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end('data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n');
  },
  "204": (_q, res) => {
    res.writeHead(204);
    res.end();
  },
};

describe("the OpenAI wires' request sent direct, against the SDK's", () => {
  for (const [name, respond] of Object.entries(answers)) {
    it(`${name}: the same request, the same outcome`, async () => {
      answer = respond;
      const { before, after, requests } = await both();
      expect(after).toEqual(before);
      expect(requests).toHaveLength(2);
      expect(requests[1]).toEqual(requests[0]);
    });
  }

  it("the Responses wire sends the SDK's request too", async () => {
    answer = answers["400 with an error object and a code"]!;
    const { before, after, requests } = await both(createResponsesWire());
    expect(after).toEqual(before);
    expect(requests[0]!.url).toBe("/v1/responses");
    expect(requests[1]).toEqual(requests[0]);
  });

  it("headers only the SDK can work out (openai-headers.ts): it builds them, and the same request goes", async () => {
    answer = answers["a stream"]!;
    const { before, after, requests } = await both(chatWire, undefined, { "X-Padded": "  v  ", "X-Gateway": "g1" });
    expect(after).toEqual(before);
    expect(requests[1]).toEqual(requests[0]);
    expect(requests[1]!.headers["x-padded"]).toBe("v");
  });

  it("a refused connection fails the same way", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const { before, after } = await both(chatWire, `http://127.0.0.1:${port}/v1`);
    expect(after).toEqual(before);
    expect(after).toMatchObject({ class: "APIConnectionError", kind: "connection" });
  });

  it("an abort while waiting for the answer fails the same way", async () => {
    answer = () => {}; // never answers
    const { sdk, direct } = clients(chatWire);
    const aborted = async (client: WireClient) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 20);
      return outcome(client, controller.signal);
    };
    const before = await aborted(sdk);
    expect(await aborted(direct)).toEqual(before);
    expect(before).toMatchObject({ class: "APIUserAbortError" });
    server.closeAllConnections();
  });
});

describe("the Chat Completions body's JSON with each tool's part reused", () => {
  const tools = [
    { name: "a", description: "first \u2028 \"quoted\"", parameters: { type: "object", properties: { x: { type: "string" } }, required: ["x"] } },
    { name: "b", description: "", parameters: { type: "object", properties: {} } },
  ];
  const signal = new AbortController().signal;
  const requests: ChatRequest[] = [
    { model: "m", messages: [{ role: "user", content: "plain" }], tools: [], signal },
    { model: "m", messages: [{ role: "system", content: "s" }, { role: "user", content: "é \u0000 </script>" }], tools, signal },
    { model: "m", messages: [{ role: "user", content: "x" }], tools: [tools[1]!], temperature: 0, maxTokens: 5, reasoning: "high", signal },
    { model: "m", messages: [{ role: "user", content: "x" }], tools, reasoning: "off", temperature: 1.5, signal },
  ];

  it("is byte for byte JSON.stringify of the body, on a first call and on calls that reuse the tools' parts", () => {
    for (let round = 0; round < 2; round++) {
      for (const r of requests) expect(chatRequestJson(r)).toBe(JSON.stringify(chatRequestBody(r)));
    }
  });
});

describe("the direct sender's URL and headers", () => {
  it("are asked for once by the sends that start together, and again after a failure", async () => {
    answer = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("data: [DONE]\n\n");
    };
    let asked = 0;
    let fail = true;
    const { send } = directSender(http, async () => {
      asked++;
      await new Promise((r) => setTimeout(r, 5));
      if (fail) throw new Error("not yet");
      return { url: new URL(`${base}/chat/completions`), headers: { "content-type": "application/json" } };
    });
    const signal = new AbortController().signal;
    // The first ask fails: every send that waited on it fails with it.
    const failed = await Promise.allSettled([send("{}", signal), send("{}", signal)]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(asked).toBe(1);
    fail = false;
    const sent = await Promise.all(Array.from({ length: 5 }, () => send("{}", signal)));
    for (const message of sent) (message as IncomingMessage).resume();
    expect(asked).toBe(2);
  });
});
