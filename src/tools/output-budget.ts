/**
 * Byte budgets for tool output, shared by every tool that produces text
 * (shell today; file, MCP and custom tools later). Two budgets, because the
 * two readers differ:
 *
 * - `OutputBudget` — the result the model reads. It must stay small, and the
 *   end of a long output (the error, the summary line) matters as much as the
 *   start, so the first and last halves are kept and the middle is replaced by
 *   one marker: `\n[… N bytes cut …]\n`, N counting exactly the bytes dropped.
 * - `StreamBudget` — live chunks for clients. It guards the server's memory
 *   and the sockets against a command printing without end: chunks pass until
 *   the budget is spent, then one notice is sent and nothing more.
 *
 * Budgets count UTF-8 bytes and never split a character: a cut lands on a
 * character boundary, so the text stays valid and the counts stay exact.
 */
import type { ToolRunContext } from "./tool.js";

/** Keeps the first and last halves of the text, in UTF-8 bytes, and counts what falls between. */
export class OutputBudget {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private readonly tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  /** `maxBytes`: the most text kept (the marker comes on top). */
  constructor(maxBytes: number) {
    this.headLimit = Math.floor(maxBytes / 2);
    this.tailLimit = maxBytes - this.headLimit;
  }

  /** Bytes appended so far, kept or not. */
  get totalBytes(): number {
    return this.total;
  }

  append(text: string): void {
    let bytes = Buffer.from(text, "utf8");
    this.total += bytes.length;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(bytes.length, this.headLimit - this.headBytes);
      this.head.push(bytes.subarray(0, take));
      this.headBytes += take;
      bytes = bytes.subarray(take);
    }
    if (bytes.length === 0) return;
    this.tail.push(bytes);
    this.tailBytes += bytes.length;
    // Drop whole chunks from the front once the rest still fills the tail; the final trim is in toString.
    while (this.tail.length > 1 && this.tailBytes - this.tail[0].length >= this.tailLimit) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  /** Everything, when it fit; else head, the cut marker and tail. */
  toString(): string {
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    if (head.length + tail.length === this.total && tail.length <= this.tailLimit) {
      return Buffer.concat([head, tail]).toString("utf8");
    }
    tail = tail.subarray(tail.length - this.tailLimit);
    // The head may end and the tail may start inside a character: both give up the partial one.
    let tailStart = 0;
    while (tailStart < tail.length && (tail[tailStart] & 0xc0) === 0x80) tailStart++;
    const headText = utf8Prefix(head, head.length);
    const tailText = tail.subarray(tailStart).toString("utf8");
    const cut = this.total - Buffer.byteLength(headText, "utf8") - (tail.length - tailStart);
    return `${headText}\n[… ${cut} bytes cut …]\n${tailText}`;
  }
}

/** Where streamed chunks go: a tool's `onOutput`. */
export type StreamSink = ToolRunContext["onOutput"];

/** Forwards chunks to a sink up to a byte budget, then sends one notice and stops. */
export class StreamBudget {
  private sent = 0;
  private over = false;
  private readonly notice: string;

  /**
   * `notice` is sent once, on the stream that crossed the budget; it does not
   * count against it. Default: `\n[output beyond N bytes is not streamed]\n`.
   */
  constructor(
    private readonly maxBytes: number,
    private readonly sink: StreamSink,
    notice?: string,
  ) {
    this.notice = notice ?? `\n[output beyond ${maxBytes} bytes is not streamed]\n`;
  }

  /** True once the budget is spent and the notice sent. */
  get closed(): boolean {
    return this.over;
  }

  send(kind: "stdout" | "stderr", text: string): void {
    if (this.over) return;
    const bytes = Buffer.byteLength(text, "utf8");
    if (this.sent + bytes <= this.maxBytes) {
      this.sent += bytes;
      this.emit(kind, text);
      return;
    }
    const head = utf8Prefix(Buffer.from(text, "utf8"), this.maxBytes - this.sent);
    if (head !== "") this.emit(kind, head);
    this.sent += Buffer.byteLength(head, "utf8");
    this.over = true;
    this.emit(kind, this.notice);
  }

  private emit(kind: "stdout" | "stderr", text: string): void {
    try {
      this.sink(kind, text);
    } catch {
      // A failing listener must not take down the tool that feeds it.
    }
  }
}

/** The longest prefix of at most `limit` bytes that ends on a character boundary, decoded. */
export function utf8Prefix(bytes: Uint8Array, limit: number): string {
  let end = Math.max(0, Math.min(limit, bytes.length));
  if (end > 0) {
    let lead = end - 1;
    while (lead >= 0 && (bytes[lead] & 0xc0) === 0x80) lead--;
    if (lead >= 0) {
      const first = bytes[lead];
      const width = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
      if (lead + width > end) end = lead;
    }
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, end).toString("utf8");
}
