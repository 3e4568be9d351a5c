import { RpcError } from "../rpc/rpc-error.js";

/**
 * Refuses a text field over `max` UTF-8 bytes with LIMIT_EXCEEDED naming the
 * field. What a client stores is kept in memory while the conversation is
 * loaded and sent again in every model request, so it is bounded.
 */
export function checkTextSize(field: string, text: string, max: number): void {
  // A character is at most 3 UTF-8 bytes (4 for a surrogate pair of 2 chars): most texts need no count.
  if (text.length * 3 <= max) return;
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > max) {
    throw RpcError.limitExceeded(`${field} is ${bytes} bytes, over the limit of ${max} (maxMessageBytes)`, "maxMessageBytes", max, bytes);
  }
}
