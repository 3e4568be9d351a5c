import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { readSseData } from "../../src/llm/sse-reader.js";

/** A body that delivers the given pieces as separate reads. */
function body(pieces: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const p of pieces) controller.enqueue(encoder.encode(p));
      controller.close();
    },
  });
}

async function readAll(pieces: string[]): Promise<string[][]> {
  const out: string[][] = [];
  for await (const batch of readSseData(body(pieces))) out.push(batch);
  return out;
}

describe("readSseData", () => {
  it("yields the events each read completes, as one batch per read", async () => {
    expect(await readAll(["data: a\n\ndata: b\n\n", "data: c\n\n"])).toEqual([["a", "b"], ["c"]]);
  });

  it("joins an event split across reads, even inside a line or a multibyte character", async () => {
    const euro = new TextEncoder().encode("data: €\n\n");
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("da"));
        controller.enqueue(new TextEncoder().encode("ta: {\"x\":"));
        controller.enqueue(new TextEncoder().encode("1}\n"));
        controller.enqueue(new TextEncoder().encode("\n"));
        controller.enqueue(euro.slice(0, 7)); // "data: " + first byte of €
        controller.enqueue(euro.slice(7));
        controller.close();
      },
    });
    const out: string[] = [];
    for await (const batch of readSseData(stream)) out.push(...batch);
    expect(out).toEqual(['{"x":1}', "€"]);
  });

  it("handles CRLF, multi-line data, comments and other fields", async () => {
    const out = await readAll([": keep-alive\r\nevent: message\r\nid: 7\r\ndata: line1\r\ndata: line2\r\n\r\n", "data:nospace\n\n"]);
    expect(out.flat()).toEqual(["line1\nline2", "nospace"]);
  });

  it("reads a data line's value after one optional space, whatever its line ending and wherever a read splits it", async () => {
    const out = await readAll(["data:\n\n", "data: \n\n", "data:  two\n\n", "data: a\r", "\n\r\n", "data:x\r\n", "\r", "\n", "data:\r\n\r\n"]);
    expect(out.flat()).toEqual(["", "", " two", "a", "x", ""]);
  });

  it("keeps a last event that lacks its blank line, and yields nothing for an empty body", async () => {
    expect((await readAll(["data: a\n\ndata: [DONE]"])).flat()).toEqual(["a", "[DONE]"]);
    expect(await readAll([])).toEqual([]);
  });

  it("cancels the body when the consumer stops early", async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode("data: x\n\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const batch of readSseData(stream)) {
      expect(batch).toContain("x");
      break;
    }
    expect(cancelled).toBe(true);
  });
});

/** A Node stream, as node-http-fetch.ts hands the response body over; its async iterator is not used. */
function nodeBody(): PassThrough {
  const stream = new PassThrough();
  (stream as unknown as Record<symbol, unknown>)[Symbol.asyncIterator] = () => {
    throw new Error("the reader must not use the stream's async iterator (a 'readable' tick and a generator step per chunk)");
  };
  return stream;
}

describe("readSseData on a Node stream", () => {
  it("reads through 'data' events: the chunks of one synchronous run are one batch", async () => {
    const stream = nodeBody();
    const reader = readSseData(stream);
    const first = reader.next();
    stream.write("data: a\n\n");
    stream.write("data: b\n");
    stream.write("\ndata: c");
    expect(await first).toEqual({ value: ["a", "b"], done: false });
    stream.end("\n\ndata: [DONE]");
    const rest: string[][] = [];
    for await (const batch of reader) rest.push(batch);
    expect(rest.flat()).toEqual(["c", "[DONE]"]);
  });

  it("joins a multibyte character split across chunks", async () => {
    const stream = nodeBody();
    const euro = Buffer.from("data: €\n\n");
    const reading = (async () => {
      const out: string[] = [];
      for await (const batch of readSseData(stream)) out.push(...batch);
      return out;
    })();
    stream.write(euro.subarray(0, 7));
    await new Promise((resolve) => setImmediate(resolve));
    stream.end(euro.subarray(7));
    expect(await reading).toEqual(["€"]);
  });

  it("hands over the events that arrived before the connection failed, then the failure", async () => {
    const stream = nodeBody();
    const out: string[] = [];
    const reading = (async () => {
      for await (const batch of readSseData(stream)) out.push(...batch);
    })();
    stream.write("data: a\n\n");
    stream.destroy(new Error("socket hang up"));
    await expect(reading).rejects.toThrow("socket hang up");
    expect(out).toEqual(["a"]);
  });

  it("fails on a premature close, as the stream's own iterator did", async () => {
    const stream = nodeBody();
    const reading = (async () => {
      for await (const _ of readSseData(stream)) {
        // nothing arrives
      }
    })();
    stream.destroy();
    await expect(reading).rejects.toThrow(/premature close/i);
  });

  it("destroys the body when the consumer stops early", async () => {
    const stream = nodeBody();
    stream.write("data: x\n\n");
    for await (const batch of readSseData(stream)) {
      expect(batch).toEqual(["x"]);
      break;
    }
    expect(stream.destroyed).toBe(true);
  });

  it("leaves no body error unhandled after the consumer stopped early", async () => {
    const stream = nodeBody();
    stream.write("data: x\n\n");
    for await (const _ of readSseData(stream)) break;
    // e.g. the request's abort reaching a response already given up on
    expect(() => stream.emit("error", new Error("late"))).not.toThrow();
  });

  it("pauses the body while the consumer lets events pile up, and resumes it when they are taken", async () => {
    const stream = nodeBody();
    const reader = readSseData(stream);
    const event = `data: ${"x".repeat(1000)}\n\n`;
    for (let i = 0; i < 80; i++) stream.write(event);
    await new Promise((resolve) => setImmediate(resolve));
    expect(stream.isPaused()).toBe(true);
    const { value } = await reader.next();
    expect(value!.length).toBeGreaterThan(64);
    expect(stream.isPaused()).toBe(false);
    stream.end();
    let count = value!.length;
    for await (const batch of reader) count += batch.length;
    expect(count).toBe(80);
  });
});

