import type { NotificationMethod, NotificationParams } from "../../protocol/index.js";

/**
 * The one way a notification becomes a frame: every event, `connected`
 * included, is serialized here, once, and the same string goes to every
 * connection that should see it.
 */
export function notificationFrame<N extends NotificationMethod>(method: N, params: NotificationParams<N>): string {
  return JSON.stringify({ jsonrpc: "2.0", method, params });
}

const PROGRESS_HEAD = '{"jsonrpc":"2.0","method":"generation_progress","params":{"conversationId":';

/**
 * The frame of one generation_progress event: the same bytes as
 * notificationFrame("generation_progress", { conversationId, seq, timestamp,
 * generationId, kind, delta }) — same keys in the same order, each string
 * escaped by JSON.stringify — written out directly. It is the one event sent
 * per token batch: building the params object and walking it generically cost
 * more than the rest of publishing it (test/sessions/progress-frame.test.ts
 * compares the two byte for byte).
 */
export function progressFrame(
  conversationIdJson: string,
  seq: number,
  timestamp: string,
  generationId: string,
  kind: "text" | "reasoning",
  delta: string,
): string {
  return `${PROGRESS_HEAD}${conversationIdJson},"seq":${seq},"timestamp":"${timestamp}","generationId":${JSON.stringify(generationId)},"kind":"${kind}","delta":${JSON.stringify(delta)}}}`;
}

let lastMs = Number.NaN;
let lastIso = "";

/**
 * `new Date(ms).toISOString()`, kept for the last millisecond asked: events
 * come in runs (a token batch for every stream of a tick), and most of them
 * share their millisecond with the one before.
 */
export function eventTimestamp(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
