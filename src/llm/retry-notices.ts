/**
 * What a failed model request says about trying again, and the notices that
 * make a retry visible: the endpoint's Retry-After (as the openai SDK reads
 * it: retry-after-ms first, then retry-after in seconds or as an HTTP date)
 * and its x-ratelimit-* headers.
 */
import type { LlmError, NoticeEvent } from "./provider.js";

/** The longest Retry-After honoured; a longer one (or a date far ahead) waits this long and the retry tells it. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The wait the endpoint asked for, in ms (at most MAX_RETRY_AFTER_MS); undefined when it asked for none. */
export function retryAfterMs(headers: Readonly<Record<string, string>> | undefined): number | undefined {
  if (!headers) return undefined;
  let ms: number | undefined;
  const millis = headers["retry-after-ms"];
  if (millis !== undefined && !Number.isNaN(Number.parseFloat(millis))) ms = Number.parseFloat(millis);
  const after = headers["retry-after"];
  if (ms === undefined && after !== undefined) {
    const seconds = Number.parseFloat(after);
    if (!Number.isNaN(seconds)) ms = seconds * 1000;
    else {
      const date = Date.parse(after);
      if (!Number.isNaN(date)) ms = date - Date.now();
    }
  }
  if (ms === undefined) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.round(ms)));
}

/** The rate_limited notice of a 429 that carried rate-limit headers; undefined otherwise. */
export function rateLimitNotice(error: LlmError): NoticeEvent | undefined {
  if (error.status !== 429 || !error.headers) return undefined;
  const limits: Record<string, string> = {};
  for (const [name, value] of Object.entries(error.headers)) {
    if (name.startsWith("x-ratelimit-")) limits[name.slice("x-ratelimit-".length)] = value;
  }
  const wait = retryAfterMs(error.headers);
  if (wait === undefined && Object.keys(limits).length === 0) return undefined;
  const reset = limits["reset-requests"] ?? limits["reset-tokens"];
  return {
    type: "notice",
    level: "warning",
    code: "rate_limited",
    message: `The model endpoint is rate limiting requests${reset ? ` (resets in ${reset})` : wait !== undefined ? ` (retry after ${wait} ms)` : ""}.`,
    data: { status: 429, retryAfterMs: wait ?? null, limits },
  };
}

/** The model_retry notice sent before retry number `attempt` (1 for the first). */
export function retryNotice(attempt: number, maxRetries: number, delayMs: number, error: LlmError): NoticeEvent {
  const cause = error.status !== undefined ? `HTTP ${error.status}` : "a connection failure";
  return {
    type: "notice",
    level: "info",
    code: "model_retry",
    message: `The model request failed (${cause}); retrying in ${delayMs} ms (attempt ${attempt} of ${maxRetries}).`,
    data: { attempt, maxRetries, delayMs, status: error.status ?? null, error: error.message },
  };
}
