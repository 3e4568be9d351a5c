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
