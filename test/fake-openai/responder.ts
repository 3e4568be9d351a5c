/**
 * Plays one script onto an HTTP response, in the wire format of the OpenAI
 * chat completions API (SSE when `stream: true`, a JSON completion otherwise).
 * The Responses API's format is responses-responder.ts's; the pieces both
 * share (errors, writes, cuts) are exported from here.
 */
import type { ServerResponse } from "node:http";
import { stampToken, type FakeReplyScript, type FakeScript, type FakeUsage } from "./scripts.js";

/** A request the responder answers; `closed` turns true when the socket is gone. */
export interface Exchange {
  /** The request: a chat body (`messages`) or a Responses body (`input`). */
  body: { model: string; messages?: unknown[]; input?: unknown; stream?: boolean; stream_options?: { include_usage?: boolean } | null; [key: string]: unknown };
  res: ServerResponse;
  requestId: string;
  /** True once the connection closed (either side). */
  isClosed(): boolean;
  /** Resolves after `ms`, or at once when the connection closes. */
  sleep(ms: number): Promise<void>;
  /** Record that the fake itself broke the connection. */
  markCut(): void;
}

type Delta = Record<string, unknown>;

export function errorBody(message: string, type: string, code: string | null, param: string | null = null): string {
  return JSON.stringify({ error: { message, type, param, code } });
}

const ERROR_DEFAULTS: Record<number, { message: string; type: string; code: string | null }> = {
  400: { message: "Bad request.", type: "invalid_request_error", code: null },
  401: { message: "Incorrect API key provided: sk-fake. You can find your API key at https://platform.openai.com/account/api-keys.", type: "invalid_request_error", code: "invalid_api_key" },
  403: { message: "You are not allowed to use this model.", type: "invalid_request_error", code: "model_not_allowed" },
  404: { message: "The model `missing-model` does not exist or you do not have access to it.", type: "invalid_request_error", code: "model_not_found" },
  429: { message: "Rate limit reached for requests. Please try again in 1s.", type: "requests", code: "rate_limit_exceeded" },
  500: { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", code: null },
  503: { message: "The engine is currently overloaded, please try again later.", type: "server_error", code: null },
};

export function sendError(ex: Exchange, script: Extract<FakeScript, { kind: "error" }>): void {
  const fallback = ERROR_DEFAULTS[script.status] ?? { message: `Error ${script.status}.`, type: "server_error", code: null };
  let message = script.message ?? fallback.message;
  if (script.status === 404 && script.message === undefined) message = `The model \`${ex.body.model}\` does not exist or you do not have access to it.`;
  const body =
    script.rawBody ?? errorBody(message, script.type ?? fallback.type, script.code === undefined ? fallback.code : script.code);
  ex.res.writeHead(script.status, {
    "content-type": script.rawBody === undefined ? "application/json" : "text/plain",
    "x-request-id": ex.requestId,
    ...script.headers,
  });
  ex.res.end(body);
}

/** About a token per four characters of what the request carries. */
export function estimateTokens(ex: Exchange): number {
  let chars = 0;
  if (Array.isArray(ex.body.messages)) for (const m of ex.body.messages) chars += JSON.stringify((m as { content?: unknown })?.content ?? "").length;
  else chars = JSON.stringify(ex.body.input ?? "").length + String(ex.body.instructions ?? "").length;
  return Math.max(1, Math.ceil(chars / 4));
}

export function usageOf(ex: Exchange, completion: number, override?: FakeUsage): FakeUsage {
  if (override) return override;
  const prompt = estimateTokens(ex);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** Chat Completions' usage object: the details only when the script gives them. */
export function chatUsage(usage: FakeUsage): Record<string, unknown> {
  const { cached_tokens, reasoning_tokens, ...counts } = usage;
  return {
    ...counts,
    ...(cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens } } : {}),
    ...(reasoning_tokens !== undefined ? { completion_tokens_details: { reasoning_tokens } } : {}),
  };
}

/** The delta chunks of a reply, in wire order (without the role chunk). */
export function replyDeltas(script: FakeReplyScript): Delta[] {
  const deltas: Delta[] = [];
  const field = script.reasoningField ?? "reasoning_content";
  for (const piece of script.reasoning ?? []) {
    if (field === "both") deltas.push({ reasoning_content: piece, reasoning: piece });
    else deltas.push({ [field]: piece });
  }
  for (const piece of script.text ?? []) deltas.push({ content: piece });

  const calls = (script.toolCalls ?? []).map((call, index) => ({
    index,
    id: call.id ?? `call_${index}`,
    name: call.name,
    fragments: typeof call.args === "string" ? [call.args] : [...call.args],
  }));
  // First fragment of each index carries id, type and name; later ones only arguments.
  const first = (c: (typeof calls)[number]) => ({
    tool_calls: [{ index: c.index, id: c.id, type: "function", function: { name: c.name, arguments: c.fragments.shift() ?? "" } }],
  });
  const rest = (c: (typeof calls)[number]) => ({ tool_calls: [{ index: c.index, function: { arguments: c.fragments.shift() } }] });
  if (script.interleave === false) {
    for (const c of calls) {
      deltas.push(first(c));
      while (c.fragments.length > 0) deltas.push(rest(c));
    }
  } else {
    for (const c of calls) deltas.push(first(c));
    while (calls.some((c) => c.fragments.length > 0)) {
      for (const c of calls) if (c.fragments.length > 0) deltas.push(rest(c));
    }
  }
  return deltas;
}

export function finishOf(script: FakeReplyScript): string | null {
  if (script.finishReason !== undefined) return script.finishReason;
  return script.toolCalls && script.toolCalls.length > 0 ? "tool_calls" : "stop";
}

/**
 * Writes one piece, waiting for the socket to drain when it is full. With
 * `flushed`, resolves only once the piece reached the kernel, so a `cut`
 * right after it cannot discard it.
 */
export async function write(ex: Exchange, text: string, flushed = false): Promise<void> {
  if (ex.isClosed()) return;
  if (flushed) {
    await new Promise<void>((resolve) => ex.res.write(text, () => resolve()));
    return;
  }
  if (!ex.res.write(text)) {
    await new Promise<void>((resolve) => {
      const done = () => {
        ex.res.off("drain", done);
        ex.res.off("close", done);
        resolve();
      };
      ex.res.on("drain", done);
      ex.res.on("close", done);
    });
  }
}

/** Answers 200 with event-stream headers, sent at once. */
export function startSse(ex: Exchange): void {
  ex.res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-request-id": ex.requestId,
  });
  ex.res.flushHeaders();
}

class SseWriter {
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly withUsage: boolean;

  constructor(private readonly ex: Exchange) {
    this.withUsage = ex.body.stream_options?.include_usage === true;
  }

  start(): void {
    startSse(this.ex);
  }

  private envelope(choices: unknown[], usage?: FakeUsage): string {
    const chunk: Record<string, unknown> = {
      id: `chatcmpl-${this.ex.requestId}`,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.ex.body.model,
      system_fingerprint: "fp_fake",
      choices,
    };
    if (this.withUsage) chunk.usage = usage ? chatUsage(usage) : null;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  delta(delta: Delta, finishReason: string | null = null, flushed = false): Promise<void> {
    return write(this.ex, this.envelope([{ index: 0, delta, logprobs: null, finish_reason: finishReason }]), flushed);
  }

  async finish(finishReason: string | null, usage: FakeUsage): Promise<void> {
    if (finishReason !== null) await this.delta({}, finishReason);
    if (this.withUsage) await write(this.ex, this.envelope([], usage));
    await write(this.ex, "data: [DONE]\n\n");
    if (!this.ex.isClosed()) this.ex.res.end();
  }
}

async function streamReply(ex: Exchange, script: FakeReplyScript): Promise<void> {
  const sse = new SseWriter(ex);
  sse.start();
  await sse.delta({ role: "assistant", content: "", refusal: null }, null, script.cutAfter === 0);
  const deltas = replyDeltas(script);
  let sent = 0;
  for (const delta of deltas) {
    if (ex.isClosed()) return;
    if (script.cutAfter !== undefined && sent >= script.cutAfter) return cut(ex);
    if (script.hangAfter !== undefined && sent >= script.hangAfter) return;
    if (script.malformedAfter !== undefined && sent >= script.malformedAfter) return malformed(ex);
    if (script.streamError && sent >= script.streamError.after) return chatStreamError(ex, script.streamError);
    await sse.delta(delta, null, script.cutAfter === sent + 1);
    sent += 1;
    if (script.delayMs) await ex.sleep(script.delayMs);
  }
  if (script.cutAfter !== undefined && sent >= script.cutAfter) return cut(ex);
  if (script.hangAfter !== undefined && sent >= script.hangAfter) return;
  if (script.malformedAfter !== undefined && sent >= script.malformedAfter) return malformed(ex);
  if (script.streamError && sent >= script.streamError.after) return chatStreamError(ex, script.streamError);
  if (ex.isClosed()) return;
  await sse.finish(finishOf(script), usageOf(ex, deltas.length, script.usage));
}

export function cut(ex: Exchange): void {
  ex.markCut();
  ex.res.destroy();
}

/** The `{"error": …}` event some servers send when they fail mid-stream, then the end. */
async function chatStreamError(ex: Exchange, failure: NonNullable<FakeReplyScript["streamError"]>): Promise<void> {
  const error = { message: failure.message ?? "The server had an error while processing your request.", type: "server_error", param: null, code: failure.code ?? "server_error" };
  await write(ex, `data: ${JSON.stringify({ error })}\n\n`);
  if (!ex.isClosed()) ex.res.end();
}

export async function malformed(ex: Exchange): Promise<void> {
  await write(ex, "data: {not json\n\n");
  if (!ex.isClosed()) ex.res.end();
}

async function streamPaced(ex: Exchange, tokens: number, delayMs: number): Promise<void> {
  const sse = new SseWriter(ex);
  sse.start();
  await sse.delta({ role: "assistant", content: "", refusal: null });
  for (let i = 0; i < tokens; i++) {
    if (ex.isClosed()) return;
    if (delayMs > 0 && i > 0) await ex.sleep(delayMs);
    // The stamp is taken right before the write so it measures what the client waits for.
    await sse.delta({ content: stampToken() });
  }
  if (ex.isClosed()) return;
  await sse.finish("stop", usageOf(ex, tokens));
}

/** A non-streaming answer: the whole completion as one JSON object. */
function completionOf(ex: Exchange, script: FakeReplyScript | { kind: "paced"; tokens: number }): string {
  let content: string | null;
  let toolCalls: unknown[] | undefined;
  let reasoning: string | undefined;
  let finish: string | null;
  let completion: number;
  if (script.kind === "paced") {
    content = Array.from({ length: script.tokens }, stampToken).join("");
    finish = "stop";
    completion = script.tokens;
  } else {
    content = script.text && script.text.length > 0 ? script.text.join("") : null;
    reasoning = script.reasoning?.join("");
    toolCalls = script.toolCalls?.map((c, i) => ({
      id: c.id ?? `call_${i}`,
      type: "function",
      function: { name: c.name, arguments: typeof c.args === "string" ? c.args : c.args.join("") },
    }));
    finish = finishOf(script);
    completion = replyDeltas(script).length;
  }
  const message: Record<string, unknown> = { role: "assistant", content, refusal: null };
  if (toolCalls && toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  return JSON.stringify({
    id: `chatcmpl-${ex.requestId}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: ex.body.model,
    system_fingerprint: "fp_fake",
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: chatUsage(usageOf(ex, completion, script.kind === "reply" ? script.usage : undefined)),
  });
}

/** Answers one valid chat request with its script. Resolves when the fake is done writing. */
export async function play(ex: Exchange, script: FakeScript): Promise<void> {
  if (script.kind === "error") return sendError(ex, script);
  if (script.kind === "hang") {
    if (script.when === "after_headers") new SseWriter(ex).start();
    return;
  }
  if (ex.body.stream === true) {
    if (script.kind === "paced") return streamPaced(ex, script.tokens, script.delayMs);
    return streamReply(ex, script);
  }
  if (script.kind === "reply" && script.cutAfter !== undefined) return cut(ex);
  if (script.kind === "reply" && script.hangAfter !== undefined) return;
  ex.res.writeHead(200, { "content-type": "application/json", "x-request-id": ex.requestId });
  if (script.kind === "reply" && script.malformedAfter !== undefined) {
    ex.res.end("{not json");
    return;
  }
  ex.res.end(completionOf(ex, script));
}
