/**
 * A small Server-Sent Events reader for model streams.
 *
 * The openai SDK's own stream decoder costs several times more CPU per token
 * than the rest of the server together (measured: about a third of a
 * 2000-token turn), so the SDK makes the request — URL, headers, auth,
 * HTTP errors — and we read the event stream ourselves. Events are handed
 * over a network read at a time: one read often carries dozens of tokens,
 * and handling them as a batch is what keeps per-token cost low.
 */

/**
 * Yields, per network read, the `data` payloads of the events completed by
 * that read. The body is a web stream or any async iterable of bytes (a Node
 * stream); leaving early cancels it.
 */
export async function* readSseData(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<string[]> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  const source = "getReader" in body ? webChunks(body) : body;
  for await (const value of source) {
    buffer += decoder.decode(value, { stream: true });
    const batch: string[] = [];
    let start = 0;
    for (;;) {
      const end = buffer.indexOf("\n", start);
      if (end < 0) break;
      let line = buffer.slice(start, end);
      start = end + 1;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        // A blank line ends an event.
        if (data.length) batch.push(data.length === 1 ? data[0]! : data.join("\n"));
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
      }
      // Other fields (event:, id:, retry:) and comments (":") carry nothing we use.
    }
    buffer = buffer.slice(start);
    if (batch.length) yield batch;
  }
  // A last event without its blank line still counts.
  buffer += decoder.decode();
  if (buffer.startsWith("data:")) data.push(buffer.charCodeAt(5) === 32 ? buffer.slice(6) : buffer.slice(5));
  if (data.length) yield [data.join("\n")];
}

/** A web stream's chunks; cancels the stream (freeing the socket) when the consumer leaves early. */
async function* webChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.cancel().catch(() => {});
    try {
      reader.releaseLock();
    } catch {
      // a read still pending after cancel: the lock goes with the stream
    }
  }
}
