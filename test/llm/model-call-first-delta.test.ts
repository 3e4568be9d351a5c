import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import type { StreamEvent } from "../../src/llm/provider.js";

/** A Chat Completions stream whose every event is written in one piece, so the client reads it in one network read. */
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const BODY = [
  chunk({ role: "assistant", content: "" }),
  ...["one", " two", " three", " four"].map((content) => chunk({ content })),
  chunk({}, "stop"),
  "data: [DONE]\n\n",
].join("");

let server: Server;
let baseURL: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(BODY);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("the first delta of a model call", () => {
  it("is handed over alone, and the tick ends before the rest of its network read is parsed", async () => {
    const provider = new OpenAIProvider({ apiKey: "k", baseURL, maxRetries: 0 });
    const events: StreamEvent[] = [];
    // What the transport does with a frame: it is written when the tick ends (setImmediate runs after that).
    let tickEndedBeforeSecond: boolean | undefined;
    for await (const event of provider.stream({ model: "m", messages: [{ role: "user", content: "hi" }], tools: [], signal: new AbortController().signal })) {
      events.push(event);
      if (events.length === 1) setImmediate(() => (tickEndedBeforeSecond = events.length === 1));
    }
    const text = events.flatMap((e) => (e.type === "text" ? [e.delta] : []));
    expect(text).toEqual(["one", " two three four"]);
    expect(tickEndedBeforeSecond).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "done", finishReason: "stop" });
  });

  it("handed to onDelta, leaves alone too, and the rest of its chunk follows in the same call stack", async () => {
    const provider = new OpenAIProvider({ apiKey: "k", baseURL, maxRetries: 0 });
    const text: string[] = [];
    // Inside the socket read: the rest of the read is parsed and handed over before any promise job runs.
    let handedBeforeFirstJob: number | undefined;
    const onDelta = (_kind: "text" | "reasoning", delta: string) => {
      text.push(delta);
      if (text.length === 1) queueMicrotask(() => (handedBeforeFirstJob = text.length));
    };
    const yielded: StreamEvent[] = [];
    for await (const event of provider.stream({ model: "m", messages: [{ role: "user", content: "hi" }], tools: [], signal: new AbortController().signal, onDelta })) {
      yielded.push(event);
    }
    expect(text).toEqual(["one", " two three four"]);
    expect(handedBeforeFirstJob).toBe(2);
    expect(yielded).toEqual([expect.objectContaining({ type: "done", finishReason: "stop" })]);
  });
});
