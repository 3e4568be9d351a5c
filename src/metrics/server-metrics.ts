/**
 * The server's counters and histograms: one source for server.status's
 * totals and for GET /metrics. Hot paths (frames sent, token deltas) only
 * add to plain numbers; prom-client reads them when /metrics is scraped.
 * Each server has its own Registry, so two servers in one process (tests)
 * never share a series.
 *
 * prom-client (with the OpenTelemetry API it pulls in) costs tens of
 * milliseconds and a few MiB to load, and many servers are never scraped:
 * it loads at the first scrape. Durations observed before then wait in a
 * bounded buffer; when the buffer fills, prom-client loads and takes them,
 * so no observation is lost either way.
 */
import type { Histogram, Registry } from "prom-client";
import type { NotificationMethod, NotificationParams } from "../../protocol/index.js";
import { importCommonJs } from "../lazy-commonjs.js";
import { monotonicMs } from "../monotonic-ms.js";
import type { RuntimeObserver } from "../sessions/runtime-observer.js";
import type { GenerationSummary } from "../store/conversation-store.js";

/** Values read at scrape time from the live server. */
export interface LiveCounts {
  connections(): number;
  conversationsLoaded(): number;
  conversationsActive(): number;
  generationsRunning(): number;
  pendingToolCalls(): number;
}

export interface ServerTotals {
  generations: { completed: number; interrupted: number; error: number };
  toolCalls: { completed: number; failed: number; skipped: number };
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  reasoningTokens: number;
  /** Cost of the priced model calls, one entry per currency. */
  cost: { amount: number; currency: string }[];
  unpricedModelCalls: number;
  framesSent: number;
  slowConsumersDropped: number;
}

type ToolOutcome = keyof ServerTotals["toolCalls"];
type Payload<N extends NotificationMethod> = Omit<NotificationParams<N>, "conversationId" | "seq" | "timestamp">;

/** Distinct tool label values at most: a model inventing tool names must not grow the series without bound. */
const MAX_TOOL_LABELS = 256;
const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const FIRST_TOKEN_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Durations held until prom-client is loaded (two numbers each); a full buffer makes it load. */
const MAX_PENDING_OBSERVATIONS = 10_000;

type PromClient = typeof import("prom-client");

/** Cluster mode: what /metrics shows of this instance's place in the cluster (read at scrape time). */
export interface ClusterGauges {
  nodeId: string;
  ownedCount(): number;
  /** The live instances as last listed (refreshed in the background). */
  instances(): readonly { id: string; address: string; ownedCount: number }[];
}
type Durations = "modelCall" | "firstToken";

export class ServerMetrics implements RuntimeObserver {
  readonly totals: ServerTotals = {
    generations: { completed: 0, interrupted: 0, error: 0 },
    toolCalls: { completed: 0, failed: 0, skipped: 0 },
    modelCalls: 0,
    promptTokens: 0,
    completionTokens: 0,
    cachedPromptTokens: 0,
    reasoningTokens: 0,
    cost: [],
    unpricedModelCalls: 0,
    framesSent: 0,
    slowConsumersDropped: 0,
  };
  /** Tool calls by tool and outcome: "tool\u0000outcome" → count. */
  private readonly toolCalls = new Map<string, number>();
  private readonly toolLabels = new Set<string>();
  /** The model call each running generation is in: when it started, and whether a token has come. */
  private readonly calls = new Map<string, { start: number; firstToken: boolean }>();
  private histograms: Record<Durations, Histogram> | undefined;
  private readonly pending: [Durations, number][] = [];
  private loading: Promise<Registry> | undefined;
  /** Set when the server joins a cluster (--redis). */
  cluster: ClusterGauges | null = null;

  constructor(
    private readonly live: LiveCounts,
    private readonly info: { instanceId: string; version: string; startedAt: number },
    /** Tools the registry has; calls of others are counted as tool="unknown". */
    private readonly knownTool: (name: string) => boolean,
  ) {}

  /** Loads prom-client and builds the registry (once): at the first scrape, or when the pending buffer fills. */
  load(): Promise<Registry> {
    this.loading ??= importCommonJs(import("prom-client")).then((prom) => this.build(prom));
    return this.loading;
  }

  private build({ Counter, Gauge, Histogram, Registry }: PromClient): Registry {
    const { live, info } = this;
    const registry = new Registry();
    const registers = [registry];
    const totals = this.totals;
    const counter = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    new Gauge({ name: "agentwire_info", help: "Always 1; the labels say which server this is.", labelNames: ["instance_id", "version"], registers }).set(
      { instance_id: info.instanceId, version: info.version },
      1,
    );
    gauge("agentwire_uptime_seconds", "Seconds since the server started.", () => (Date.now() - info.startedAt) / 1000);
    gauge("agentwire_connections", "Open client connections.", live.connections);
    gauge("agentwire_conversations_loaded", "Conversations held in memory.", live.conversationsLoaded);
    gauge("agentwire_conversations_active", "Loaded conversations with a generation running or tool calls pending.", live.conversationsActive);
    gauge("agentwire_generations_running", "Generations running now.", live.generationsRunning);
    gauge("agentwire_pending_tool_calls", "Tool calls waiting for tool.confirm now.", live.pendingToolCalls);
    new Counter({
      name: "agentwire_generations_total",
      help: "Generations ended, by outcome (completed, interrupted, error).",
      labelNames: ["outcome"],
      registers,
      collect() {
        this.reset();
        for (const [outcome, n] of Object.entries(totals.generations)) this.inc({ outcome }, n);
      },
    });
    const metrics = this;
    gauge("agentwire_cluster_owned_conversations", "Cluster mode: conversations this instance owns (holds the lease of); 0 for a single instance.", () =>
      metrics.cluster ? metrics.cluster.ownedCount() : 0,
    );
    gauge("agentwire_cluster_instances", "Cluster mode: live instances in the cluster, this one included; 0 for a single instance.", () =>
      metrics.cluster ? metrics.cluster.instances().length : 0,
    );
    new Gauge({
      name: "agentwire_cluster_instance_owned_conversations",
      help: "Cluster mode: conversations each live instance owned at its last heartbeat, by node id and address; `self` is 1 for this instance.",
      labelNames: ["node_id", "address", "self"],
      registers,
      collect() {
        this.reset();
        const cluster = metrics.cluster;
        if (!cluster) return;
        for (const i of cluster.instances()) this.set({ node_id: i.id, address: i.address, self: i.id === cluster.nodeId ? "1" : "0" }, i.ownedCount);
      },
    });
    counter("agentwire_model_calls_total", "Model calls that finished.", () => totals.modelCalls);
    const toolCalls = this.toolCalls;
    new Counter({
      name: "agentwire_tool_calls_total",
      help: "Tool calls settled, by tool and outcome (completed, failed, skipped).",
      labelNames: ["tool", "outcome"],
      registers,
      collect() {
        this.reset();
        for (const [key, n] of toolCalls) {
          const [tool, outcome] = key.split("\u0000");
          this.inc({ tool, outcome }, n);
        }
      },
    });
    new Counter({
      name: "agentwire_model_tokens_total",
      help: "Tokens the endpoint reported: kind=prompt (in) or completion (out); cached_prompt and reasoning are the parts of those the endpoint detailed.",
      labelNames: ["kind"],
      registers,
      collect() {
        this.reset();
        this.inc({ kind: "prompt" }, totals.promptTokens);
        this.inc({ kind: "completion" }, totals.completionTokens);
        this.inc({ kind: "cached_prompt" }, totals.cachedPromptTokens);
        this.inc({ kind: "reasoning" }, totals.reasoningTokens);
      },
    });
    new Counter({
      name: "agentwire_model_cost_total",
      help: "What the model calls cost, by currency, from the models' configured pricing (calls without pricing are not in it).",
      labelNames: ["currency"],
      registers,
      collect() {
        this.reset();
        for (const { amount, currency } of totals.cost) this.inc({ currency }, amount);
      },
    });
    counter("agentwire_model_calls_unpriced_total", "Model calls whose cost is unknown (no configured pricing, or no usage reported).", () => totals.unpricedModelCalls);
    counter("agentwire_frames_sent_total", "Frames (replies and notifications) sent to clients.", () => totals.framesSent);
    counter(
      "agentwire_slow_consumers_dropped_total",
      "Connections terminated because they stopped reading (send backlog over limits.maxBufferedBytes).",
      () => totals.slowConsumersDropped,
    );
    this.histograms = {
      modelCall: new Histogram({
        name: "agentwire_model_call_duration_seconds",
        help: "From the start of a model request to its last token, for model calls that finished.",
        buckets: LATENCY_BUCKETS,
        registers,
      }),
      firstToken: new Histogram({
        name: "agentwire_model_time_to_first_token_seconds",
        help: "From the start of a model request to its first text or reasoning token.",
        buckets: FIRST_TOKEN_BUCKETS,
        registers,
      }),
    };
    for (const [which, seconds] of this.pending.splice(0)) this.histograms[which].observe(seconds);
    return registry;
  }

  private observe(which: Durations, seconds: number): void {
    if (this.histograms) return this.histograms[which].observe(seconds);
    this.pending.push([which, seconds]);
    // Loading takes milliseconds: the few observed meanwhile still fit (the bound is only a backstop).
    if (this.pending.length === MAX_PENDING_OBSERVATIONS) void this.load().catch(() => {});
    else if (this.pending.length > 2 * MAX_PENDING_OBSERVATIONS) this.pending.shift();
  }

  /** One frame left for a client. On the token path: a counter, nothing more. */
  frameSent(): void {
    this.totals.framesSent++;
  }

  slowConsumerDropped(): void {
    this.totals.slowConsumersDropped++;
  }

  /** The Prometheus text exposition, and its content type. */
  async exposition(): Promise<{ text: string; contentType: string }> {
    const registry = await this.load();
    return { text: await registry.metrics(), contentType: registry.contentType };
  }

  event<N extends NotificationMethod>(method: N, payload: Payload<N>): void {
    // The token path first, and kept to one lookup.
    if (method === "generation_progress") {
      const call = this.calls.get((payload as Payload<"generation_progress">).generationId);
      if (call && !call.firstToken) {
        call.firstToken = true;
        this.observe("firstToken", (monotonicMs() - call.start) / 1000);
      }
      return;
    }
    switch (method) {
      case "generation_started":
        this.calls.set((payload as Payload<"generation_started">).generationId, { start: monotonicMs(), firstToken: false });
        return;
      case "generation_complete": {
        const { generationId, usage } = payload as Payload<"generation_complete">;
        const call = this.calls.get(generationId);
        if (call) this.observe("modelCall", (monotonicMs() - call.start) / 1000);
        this.calls.delete(generationId);
        this.totals.modelCalls++;
        if (usage) {
          this.totals.promptTokens += usage.promptTokens;
          this.totals.completionTokens += usage.completionTokens;
          this.totals.cachedPromptTokens += usage.cachedPromptTokens ?? 0;
          this.totals.reasoningTokens += usage.reasoningTokens ?? 0;
        }
        return;
      }
      case "usage_updated": {
        const { cost } = payload as Payload<"usage_updated">;
        if (!cost) {
          this.totals.unpricedModelCalls++;
          return;
        }
        const entry = this.totals.cost.find((c) => c.currency === cost.currency);
        if (entry) entry.amount = Math.round((entry.amount + cost.amount) * 1e10) / 1e10;
        else this.totals.cost.push({ ...cost });
        return;
      }
      case "tool_completed":
        return this.toolCall((payload as Payload<"tool_completed">).record.toolName, "completed");
      case "tool_failed":
        return this.toolCall((payload as Payload<"tool_failed">).record.toolName, "failed");
      case "tool_skipped":
        return this.toolCall((payload as Payload<"tool_skipped">).record.toolName, "skipped");
      default:
    }
  }

  generationEnded(summary: GenerationSummary): void {
    this.totals.generations[summary.outcome]++;
    this.calls.delete(summary.generationId);
  }

  private toolCall(name: string, outcome: ToolOutcome): void {
    this.totals.toolCalls[outcome]++;
    let tool = this.knownTool(name) ? name : "unknown";
    if (!this.toolLabels.has(tool)) {
      if (this.toolLabels.size >= MAX_TOOL_LABELS) tool = "other";
      else this.toolLabels.add(tool);
    }
    const key = `${tool}\u0000${outcome}`;
    this.toolCalls.set(key, (this.toolCalls.get(key) ?? 0) + 1);
  }
}
