/**
 * The server's frame limit, as chat meets it. The server advertises its
 * largest accepted frame in `initialize` (capabilities.maxPayloadBytes) and
 * closes the socket with 1009 on a larger one — which the user saw as
 * "connection closed (code 1009)", naming neither the limit nor its value.
 * So chat measures a request before sending it, and says in words what a
 * 1009 close means if one happens anyway.
 */
import type { AgentwireClient } from "../../clients/typescript/index.js";

/** A request chat did not send because its frame would pass the server's limit. */
export class FrameTooLargeError extends Error {
  override readonly name = "FrameTooLargeError";
}

/** The limit the server advertised; undefined when it said none. */
export function advertisedFrameLimit(client: AgentwireClient): number | undefined {
  try {
    const limit = client.initializeResult.capabilities.maxPayloadBytes;
    return typeof limit === "number" && limit > 0 ? limit : undefined;
  } catch {
    return undefined; // not initialized: nothing advertised
  }
}

/** Bytes of the frame the client sends for this request (encoded as the runtime does, with the widest id). */
export function requestFrameBytes(method: string, params: unknown): number {
  return Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: Number.MAX_SAFE_INTEGER, method, params }));
}

/** Throws FrameTooLargeError, naming the limit and its value, when the request would pass it. */
export function checkFrameSize(client: AgentwireClient, method: string, params: unknown, what: string): void {
  const limit = advertisedFrameLimit(client);
  if (limit === undefined) return;
  const bytes = requestFrameBytes(method, params);
  if (bytes <= limit) return;
  throw new FrameTooLargeError(
    `${what} is too large to send: the request would be ${bytes} bytes, over the server's frame limit of ${limit} bytes ` +
      `(maxPayloadBytes; the server's --max-payload)`,
  );
}

/** Close 1009 in words, with the limit when the server advertised one. */
export function frameLimitClose(client: AgentwireClient): string {
  const limit = advertisedFrameLimit(client);
  return `connection closed by the server (1009): a request was over its frame limit${limit !== undefined ? ` of ${limit} bytes` : ""} (maxPayloadBytes; the server's --max-payload)`;
}
