/**
 * What the web tools need around Node's fetch: a signal that fires on
 * interrupt or at the time limit (and says which), a body read that stops
 * at a byte cap instead of buffering whatever a server sends, and a
 * readable line for a network failure (fetch says only "fetch failed").
 */

export type DeadlineReason = "timeout" | "interrupt";

export interface Deadline {
  /** Aborted on interrupt or at the time limit; pass it to fetch (it also cancels the body). */
  readonly signal: AbortSignal;
  /** Why the signal fired, or null while it has not. */
  reason(): DeadlineReason | null;
  dispose(): void;
}

export function startDeadline(interrupt: AbortSignal, timeoutMs: number): Deadline {
  const controller = new AbortController();
  let reason: DeadlineReason | null = null;
  const fire = (why: DeadlineReason) => {
    if (reason !== null) return;
    reason = why;
    controller.abort(new Error(why === "timeout" ? `timed out after ${timeoutMs} ms` : "interrupted"));
  };
  const onInterrupt = () => fire("interrupt");
  if (interrupt.aborted) fire("interrupt");
  else interrupt.addEventListener("abort", onInterrupt, { once: true });
  const timer = setTimeout(() => fire("timeout"), timeoutMs);
  return {
    signal: controller.signal,
    reason: () => reason,
    dispose() {
      clearTimeout(timer);
      interrupt.removeEventListener("abort", onInterrupt);
    },
  };
}

export interface CappedBody {
  bytes: Buffer;
  /** The body went on beyond the cap; reading stopped there and the connection was released. */
  truncated: boolean;
}

/** Reads the body up to `maxBytes`; stops (cancelling the rest) as soon as more arrives. */
export async function readCappedBody(response: Response, maxBytes: number): Promise<CappedBody> {
  if (!response.body) return { bytes: Buffer.alloc(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks), truncated: false };
      const room = maxBytes - size;
      if (value.byteLength > room) {
        chunks.push(Buffer.from(value.buffer, value.byteOffset, room));
        await reader.cancel().catch(() => {});
        return { bytes: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      size += value.byteLength;
    }
  } finally {
    reader.releaseLock();
  }
}

/** Drops a body we will not read, so the connection is not held open. */
export async function discardBody(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => {});
}

/**
 * "connection refused (ECONNREFUSED)" rather than fetch's bare "fetch
 * failed"; a connection tried on several addresses (localhost: ::1 and
 * 127.0.0.1) fails as an AggregateError with an empty message, so its
 * members are named instead.
 */
export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: unknown }).cause;
  const inner = cause instanceof Error ? cause : error;
  if (inner instanceof AggregateError && inner.message === "" && inner.errors.length > 0) {
    return [...new Set(inner.errors.map(describeNetworkError))].join("; ");
  }
  const code = (inner as NodeJS.ErrnoException).code;
  return code && !inner.message.includes(code) ? `${inner.message} (${code})` : inner.message;
}

/** The media type of a Content-Type header, lower-cased, without parameters ("" when absent). */
export function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The charset parameter of a Content-Type header, if any. */
export function charsetOf(contentType: string | null): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "");
  return match?.[1];
}
