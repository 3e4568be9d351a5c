/**
 * What the fake OpenAI server answers. A script is plain data: tests enqueue
 * scripts on a server, and a client in another process picks one per request
 * with the `x-fake-script` header (JSON) or a `bench-*` model name.
 */

/** One tool call the fake streams. Its arguments go out in the given pieces. */
export interface FakeToolCallScript {
  /** Defaults to `call_<n>`. */
  id?: string;
  name: string;
  /** The argument JSON text, as one string or as the fragments to stream. */
  args: string | string[];
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /**
   * Cached prompt tokens: chat sends `prompt_tokens_details.cached_tokens`,
   * the Responses API `input_tokens_details.cached_tokens`. Chat leaves the
   * details out when absent (as many compatible servers do); Responses sends 0.
   */
  cached_tokens?: number;
  /** Reasoning tokens: `completion_tokens_details.reasoning_tokens` / `output_tokens_details.reasoning_tokens`, likewise. */
  reasoning_tokens?: number;
  /**
   * Prompt tokens written to the cache: only the Anthropic Messages API says
   * (`cache_creation_input_tokens`; 0 when absent). There, `input_tokens` is
   * prompt_tokens less the cached and written ones.
   */
  cache_write_tokens?: number;
}

/**
 * A normal answer. Chunk order: role chunk, reasoning, text, tool-call
 * fragments, finish chunk, usage chunk (when `stream_options.include_usage`),
 * `[DONE]`. The modifiers (`cutAfter`, `malformedAfter`, `hangAfter`,
 * `streamError`) count delta chunks after the role chunk. On the Responses
 * API the same answer is a reasoning item, a message item and one
 * function_call item per call, and the modifiers count delta events
 * (reasoning summary, text, argument deltas).
 */
export interface FakeReplyScript {
  kind: "reply";
  text?: string[];
  reasoning?: string[];
  /** Which delta field carries reasoning; "both" sends the same piece in both. */
  reasoningField?: "reasoning_content" | "reasoning" | "both";
  toolCalls?: FakeToolCallScript[];
  /** Round-robin the argument fragments of different indices (default true). */
  interleave?: boolean;
  /** Pause between chunks. */
  delayMs?: number;
  /** Default "tool_calls" when there are tool calls, else "stop"; null sends none. */
  finishReason?: string | null;
  /** Default: computed from the request and the chunks. */
  usage?: FakeUsage;
  /** Destroy the socket after this many delta chunks. */
  cutAfter?: number;
  /** Send `data: {not json` after this many delta chunks, then end the stream. */
  malformedAfter?: number;
  /** Stop writing (keep the connection open) after this many delta chunks. */
  hangAfter?: number;
  /**
   * Fail mid-stream after this many delta chunks: chat sends an `{"error": …}`
   * chunk; the Responses API a `response.failed` event (or an `error` event
   * with `event: "error"`). Then the stream ends.
   */
  streamError?: { after: number; message?: string; code?: string; event?: "response.failed" | "error" };
}

/** An HTTP failure with an OpenAI-style error body (or `rawBody` verbatim). */
export interface FakeErrorScript {
  kind: "error";
  status: number;
  /** Extra response headers, e.g. retry-after, retry-after-ms, x-ratelimit-remaining-requests. */
  headers?: Record<string, string>;
  message?: string;
  type?: string;
  code?: string | null;
  rawBody?: string;
}

/** Accept the request and never answer, or send headers and then nothing. */
export interface FakeHangScript {
  kind: "hang";
  when?: "before_headers" | "after_headers";
}

/**
 * `tokens` content deltas, `delayMs` apart (0 = as fast as the socket takes
 * them). Each delta is `t:<ns>;` where <ns> is `process.hrtime.bigint()` at the
 * moment the fake wrote it (CLOCK_MONOTONIC on Linux, so comparable with
 * another process's `process.hrtime.bigint()` on the same machine).
 */
export interface FakePacedScript {
  kind: "paced";
  tokens: number;
  delayMs: number;
}

export type FakeScript = FakeReplyScript | FakeErrorScript | FakeHangScript | FakePacedScript;

export const DEFAULT_SCRIPT: FakeReplyScript = { kind: "reply", text: ["Hello", " from", " the fake."] };

/** Prefix and terminator of one paced token: `t:<ns>;`. */
export const STAMP_PREFIX = "t:";
export const STAMP_END = ";";

export function stampToken(): string {
  return `${STAMP_PREFIX}${process.hrtime.bigint()}${STAMP_END}`;
}

/** Parses concatenated `t:<ns>;` tokens (deltas may be merged downstream). */
export function parseStamps(text: string): bigint[] {
  const out: bigint[] = [];
  for (const match of text.matchAll(/t:(\d+);/g)) out.push(BigInt(match[1]));
  return out;
}

/** The plan `bench-plan` sets. */
export const BENCH_PLAN = [
  { content: "Read the failing test", status: "completed" },
  { content: "Fix src/invoice.ts", status: "in_progress", priority: "high" },
  { content: "Run the tests", status: "pending" },
];

/**
 * `bench-burst-<N>`: N stamped tokens back to back.
 * `bench-paced-<N>-<D>`: N stamped tokens D ms apart.
 * `bench-tool-true`: one shell tool call `{"command":"true"}`, unless the last
 * message is a tool result, which gets a short stamped text reply — one tool
 * round trip per step.
 * `bench-tool-paced-<N>-<D>`: the same shell call, then N stamped tokens D ms
 * apart after the tool result (a generation that streams for a while after
 * its tool ran).
 * `bench-plan`: one update_plan call with a three-step plan (BENCH_PLAN),
 * then "Planned." after its result.
 * `bench-edit`: one edit_file call replacing "line two" with "line 2" in
 * notes.txt, then "Edited." after its result (docs/chat.md shows the diff
 * before the question).
 */
export function scriptFromModel(model: string, messages: readonly { role?: unknown }[] = []): FakeScript | null {
  if (model === "bench-plan") {
    if (messages.at(-1)?.role === "tool") return { kind: "reply", text: ["Planned."] };
    return { kind: "reply", toolCalls: [{ id: `call_${process.hrtime.bigint()}`, name: "update_plan", args: JSON.stringify({ entries: BENCH_PLAN }) }] };
  }
  if (model === "bench-edit") {
    if (messages.at(-1)?.role === "tool") return { kind: "reply", text: ["Edited."] };
    const args = { path: "notes.txt", old_string: "line two", new_string: "line 2" };
    return { kind: "reply", toolCalls: [{ id: `call_${process.hrtime.bigint()}`, name: "edit_file", args: JSON.stringify(args) }] };
  }
  if (model === "bench-tool-true") {
    if (messages.at(-1)?.role === "tool") return { kind: "paced", tokens: 5, delayMs: 0 };
    return { kind: "reply", toolCalls: [{ id: `call_${process.hrtime.bigint()}`, name: "shell", args: '{"command":"true"}' }] };
  }
  const toolPaced = /^bench-tool-paced-(\d+)-(\d+)$/.exec(model);
  if (toolPaced) {
    if (messages.at(-1)?.role === "tool") return { kind: "paced", tokens: Number(toolPaced[1]), delayMs: Number(toolPaced[2]) };
    return { kind: "reply", toolCalls: [{ id: `call_${process.hrtime.bigint()}`, name: "shell", args: '{"command":"true"}' }] };
  }
  const burst = /^bench-burst-(\d+)$/.exec(model);
  if (burst) return { kind: "paced", tokens: Number(burst[1]), delayMs: 0 };
  const paced = /^bench-paced-(\d+)-(\d+)$/.exec(model);
  if (paced) return { kind: "paced", tokens: Number(paced[1]), delayMs: Number(paced[2]) };
  return null;
}

/** Reads the `x-fake-script` header; throws with a readable message when it is not a script. */
export function scriptFromHeader(value: string): FakeScript {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error("x-fake-script is not JSON");
  }
  const kind = (parsed as { kind?: unknown } | null)?.kind;
  if (kind !== "reply" && kind !== "error" && kind !== "hang" && kind !== "paced") {
    throw new Error("x-fake-script needs kind reply, error, hang or paced");
  }
  return parsed as FakeScript;
}
