/**
 * How a failed response's headers set the retry (src/llm/retry-notices.ts):
 * retry-after-ms first, then retry-after in seconds or as an HTTP date, as
 * the openai SDK reads them; at most 60 s; and rate_limited only for a 429
 * that says something about its limits.
 */
import { expect, it } from "vitest";
import { LlmError } from "../../src/llm/provider.js";
import { MAX_RETRY_AFTER_MS, rateLimitNotice, retryAfterMs } from "../../src/llm/retry-notices.js";

it("reads retry-after-ms, retry-after seconds and dates, capped, never negative", () => {
  expect(retryAfterMs(undefined)).toBeUndefined();
  expect(retryAfterMs({ "x-ratelimit-remaining-requests": "0" })).toBeUndefined();
  expect(retryAfterMs({ "retry-after-ms": "250", "retry-after": "9" })).toBe(250);
  expect(retryAfterMs({ "retry-after": "1.5" })).toBe(1500);
  expect(retryAfterMs({ "retry-after": "3600" })).toBe(MAX_RETRY_AFTER_MS);
  expect(retryAfterMs({ "retry-after": new Date(Date.now() - 5000).toUTCString() })).toBe(0);
  const inTenSeconds = retryAfterMs({ "retry-after": new Date(Date.now() + 10_000).toUTCString() })!;
  expect(inTenSeconds).toBeGreaterThan(8000);
  expect(inTenSeconds).toBeLessThanOrEqual(10_000);
  expect(retryAfterMs({ "retry-after": "soon" })).toBeUndefined();
});

it("a 429 with rate-limit headers is rate_limited; one without, or another status, is not", () => {
  const limited = rateLimitNotice(
    new LlmError("slow down", "http", 429, { "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "2s", "retry-after": "2" }),
  );
  expect(limited).toMatchObject({
    code: "rate_limited",
    level: "warning",
    data: { status: 429, retryAfterMs: 2000, limits: { "remaining-tokens": "0", "reset-tokens": "2s" } },
  });
  expect(limited!.message).toContain("resets in 2s");
  expect(rateLimitNotice(new LlmError("slow down", "http", 429))).toBeUndefined();
  expect(rateLimitNotice(new LlmError("busy", "http", 503, { "retry-after": "1" }))).toBeUndefined();
});
