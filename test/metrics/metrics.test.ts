/**
 * GET /metrics: the Prometheus text exposition, behind the socket's token,
 * parsed by an independent parser; its counters move with a generation that
 * runs a tool.
 */
import parsePrometheusTextFormat, { type PrometheusFamily } from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { newConversation, startAgentFixture, useAgentFixture } from "../harness/agent-fixture.js";

const TOKEN = "metrics-token-1234";
const fx = useAgentFixture({ config: { server: { token: TOKEN } } });

const httpUrl = (path: string) => fx.server.url.replace(/^ws:/, "http:") + path;

async function scrape(): Promise<Map<string, PrometheusFamily>> {
  const response = await fetch(httpUrl("/metrics"), { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  const families = parsePrometheusTextFormat(await response.text());
  return new Map(families.map((f) => [f.name, f]));
}

/** The value of one series: the family's sample whose labels include `labels`; 0 when there is none. */
function value(families: Map<string, PrometheusFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  expect(family, `metric ${name}`).toBeDefined();
  const sample = family!.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample ? Number(sample.value) : 0;
}

describe("GET /metrics", () => {
  it("needs the token when one is set: 401 without it or with a wrong one; ?token= works like the header", async () => {
    const bare = await fetch(httpUrl("/metrics"));
    expect(bare.status).toBe(401);
    expect(await bare.text()).not.toContain("agentwire_");
    expect((await fetch(httpUrl("/metrics"), { headers: { authorization: "Bearer wrong-token-000000" } })).status).toBe(401);
    expect((await fetch(httpUrl(`/metrics?token=${TOKEN}`))).status).toBe(200);
    // The health check stays open.
    expect((await fetch(httpUrl("/healthz"))).status).toBe(200);
  });

  it("parses as Prometheus text, and the counters move after a generation with a tool call", async () => {
    const before = await scrape();
    for (const name of [
      "agentwire_connections",
      "agentwire_conversations_loaded",
      "agentwire_generations_total",
      "agentwire_model_call_duration_seconds",
      "agentwire_model_time_to_first_token_seconds",
      "agentwire_model_tokens_total",
      "agentwire_tool_calls_total",
      "agentwire_frames_sent_total",
      "agentwire_slow_consumers_dropped_total",
    ]) {
      expect(before.has(name), name).toBe(true);
    }
    expect(before.get("agentwire_generations_total")!.type).toBe("COUNTER");
    expect(before.get("agentwire_model_call_duration_seconds")!.type).toBe("HISTOGRAM");
    expect(value(before, "agentwire_info", { instance_id: fx.server.server.app.instanceId })).toBe(1);

    fx.fake.enqueue(
      {
        kind: "reply",
        text: ["Let me look."],
        toolCalls: [{ id: "call_m", name: "shell", args: JSON.stringify({ command: "echo metric" }) }],
        usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
      },
      { kind: "reply", text: ["Seen."], usage: { prompt_tokens: 17, completion_tokens: 2, total_tokens: 19 } },
    );
    const { id } = await newConversation(fx.client);
    await fx.client.step({ conversationId: id, autoConfirm: true });
    expect(await fx.client.generation.wait({ conversationId: id, timeoutMs: 5000 })).toMatchObject({ done: true, outcome: "completed" });

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
    expect(delta("agentwire_generations_total", { outcome: "completed" })).toBe(1);
    expect(delta("agentwire_generations_total", { outcome: "error" })).toBe(0);
    expect(delta("agentwire_tool_calls_total", { tool: "shell", outcome: "completed" })).toBe(1);
    expect(delta("agentwire_model_calls_total")).toBe(2);
    expect(delta("agentwire_model_tokens_total", { kind: "prompt" })).toBe(28);
    expect(delta("agentwire_model_tokens_total", { kind: "completion" })).toBe(6);
    expect(delta("agentwire_frames_sent_total")).toBeGreaterThan(10);
    const latency = after.get("agentwire_model_call_duration_seconds")!.metrics[0]!;
    const latencyBefore = before.get("agentwire_model_call_duration_seconds")!.metrics[0]!;
    expect(Number(latency.count) - Number(latencyBefore.count)).toBe(2);
    const firstToken = after.get("agentwire_model_time_to_first_token_seconds")!.metrics[0]!;
    expect(Number(firstToken.count)).toBeGreaterThanOrEqual(2);
    expect(value(after, "agentwire_connections")).toBeGreaterThanOrEqual(1);
    expect(value(after, "agentwire_conversations_loaded")).toBeGreaterThanOrEqual(1);
    // Still consistent with server.status, which reads the same counters.
    const status = await fx.client.server.status();
    expect(status.totals.generations.completed).toBe(value(after, "agentwire_generations_total", { outcome: "completed" }));
    expect(status.totals.toolCalls.completed).toBe(value(after, "agentwire_tool_calls_total", { tool: "shell", outcome: "completed" }));
  });

  it("two servers in one process keep separate registries", async () => {
    const other = await startAgentFixture();
    try {
      const text = await (await fetch(other.server.url.replace(/^ws:/, "http:") + "/metrics")).text();
      const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
      expect(value(families, "agentwire_model_calls_total")).toBe(0);
      expect(value(families, "agentwire_info", { instance_id: other.server.server.app.instanceId })).toBe(1);
      expect(other.server.server.app.instanceId).not.toBe(fx.server.server.app.instanceId);
    } finally {
      await other.close();
    }
  });
});
