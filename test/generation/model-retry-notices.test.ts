/**
 * Retries are told, not silent (issue 22): a model request that fails before
 * its answer begins and is sent again gives one `model_retry` notice per
 * retry — and `rate_limited` first when a 429 carries rate-limit headers —
 * and the generation goes on to complete. The endpoint's Retry-After sets the
 * pause, and an interrupt cuts it.
 */
import { describe, expect, it } from "vitest";
import type { WireName } from "../../src/llm/create-provider.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

for (const wire of ["chat", "responses", "anthropic"] as WireName[]) {
  describe(`on the ${wire} wire`, () => {
    const fx = useAgentFixture({ wire });

    it("a 429 with rate-limit headers, then 200: rate_limited and one model_retry, and the generation completes", async () => {
      fx.fake.enqueue(
        {
          kind: "error",
          status: 429,
          headers: {
            "retry-after-ms": "300",
            "x-ratelimit-limit-requests": "60",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "300ms",
          },
        },
        { kind: "reply", text: ["Made it."] },
      );
      const { id, events } = await newConversation(fx.client);
      const started = Date.now();
      const { generationId } = await fx.client.step({ conversationId: id });
      const end = await events.waitForEnd(generationId);
      expect(end.method).toBe("generation_complete");
      // The endpoint's Retry-After set the pause, not the fixture's 10–20 ms backoff.
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(fx.fake.requests).toHaveLength(2);

      const notices = events.of("notice");
      expect(notices.map((n) => n.code)).toEqual(["rate_limited", "model_retry"]);
      expect(notices[0]).toMatchObject({
        conversationId: id,
        generationId,
        level: "warning",
        data: { status: 429, retryAfterMs: 300, limits: { "limit-requests": "60", "remaining-requests": "0", "reset-requests": "300ms" } },
      });
      expect(notices[1]).toMatchObject({
        generationId,
        level: "info",
        data: { attempt: 1, maxRetries: 2, delayMs: 300, status: 429 },
      });
      expect(notices[1]!.message).toMatch(/HTTP 429.*retrying in 300 ms/);
      // Told before the model call's text; a notice ends nothing.
      const flow = events.flow();
      expect(flow.indexOf("notice")).toBeLessThan(flow.indexOf("generation_progress"));
      expect(events.of("error")).toEqual([]);
    });

    it("a 503 without headers: model_retry only, after our backoff", async () => {
      fx.fake.enqueue({ kind: "error", status: 503 }, { kind: "reply", text: ["Back."] });
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
      const notices = events.of("notice");
      expect(notices.map((n) => n.code)).toEqual(["model_retry"]);
      expect(notices[0]!.data).toMatchObject({ attempt: 1, status: 503 });
      expect(notices[0]!.data.delayMs).toBeLessThanOrEqual(24); // the fixture's backoff: 10 ms ±20 %
    });

    it("retries that run out: each is told, then the error ends the generation", async () => {
      fx.fake.enqueue({ kind: "error", status: 500 }, { kind: "error", status: 500 }, { kind: "error", status: 500 });
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      const end = await events.waitForEnd(generationId);
      expect(end.method).toBe("error");
      expect(events.of("notice").map((n) => n.data.attempt)).toEqual([1, 2]);
    });

    it("an interrupt cuts a Retry-After wait", async () => {
      fx.fake.enqueue({ kind: "error", status: 429, headers: { "retry-after": "30" } });
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      const retry = await events.waitFor((e) => e.method === "notice" && e.params.code === "model_retry");
      expect(retry.params.data).toMatchObject({ delayMs: 30_000 });
      await fx.client.interrupt({ conversationId: id });
      expect((await events.waitForEnd(generationId, 2000)).method).toBe("interrupted");
      expect(fx.fake.requests).toHaveLength(1);
    });
  });
}
