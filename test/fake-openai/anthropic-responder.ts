/**
 * Plays one script onto an HTTP response as the Anthropic Messages API
 * streams (`POST /v1/messages`, `stream: true`): `event: <type>` + `data:
 * <json>` for message_start, then per content block content_block_start,
 * its deltas (thinking_delta then signature_delta, text_delta,
 * input_json_delta) and content_block_stop, then message_delta (stop_reason,
 * usage) and message_stop. Errors are the API's: `{"type": "error",
 * "error": {"type": …, "message": …}}`, as an HTTP body or an `error` event.
 *
 * The same scripts as the other wires: `reasoning` is one thinking block
 * (signed: SIGNATURE_PREFIX + its text, base64, so a request can prove it
 * sent the block back unchanged), `text` one text block, each tool call one
 * tool_use block. The modifiers count delta events.
 */
import { cut, estimateTokens, finishOf, malformed, startSse, write, type Exchange } from "./responder.js";
import { stampToken, type FakeReplyScript, type FakeScript } from "./scripts.js";

type Json = Record<string, unknown>;

/** The signature this fake gives a thinking block. */
export const SIGNATURE_PREFIX = "sig_fake_";

export function signatureOf(thinking: string): string {
  return SIGNATURE_PREFIX + Buffer.from(thinking).toString("base64");
}

/** HTTP status → the API's error type and a message like its own. */
const ERRORS: Record<number, { type: string; message: string }> = {
  400: { type: "invalid_request_error", message: "Bad request." },
  401: { type: "authentication_error", message: "invalid x-api-key" },
  403: { type: "permission_error", message: "Your API key does not have permission to use the specified resource." },
  404: { type: "not_found_error", message: "model: missing-model" },
  413: { type: "request_too_large", message: "Request exceeds the maximum allowed number of bytes." },
  429: { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit." },
  500: { type: "api_error", message: "Internal server error" },
  529: { type: "overloaded_error", message: "Overloaded" },
};

export function anthropicErrorBody(status: number, message?: string, type?: string): string {
  const fallback = ERRORS[status] ?? { type: "api_error", message: `Error ${status}.` };
  return JSON.stringify({ type: "error", error: { type: type ?? fallback.type, message: message ?? fallback.message } });
}

function event(ex: Exchange, data: Json, flushed = false): Promise<void> {
  return write(ex, `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`, flushed);
}

/** One event to write; `delta` marks those the script's modifiers count. */
interface Step {
  data: Json;
  delta?: boolean;
}

function replySteps(ex: Exchange, script: FakeReplyScript): Step[] {
  const steps: Step[] = [];
  let index = 0;
  const block = (start: Json, deltas: Json[], after: Json[] = []) => {
    const at = index++;
    steps.push({ data: { type: "content_block_start", index: at, content_block: start } });
    for (const delta of deltas) steps.push({ data: { type: "content_block_delta", index: at, delta }, delta: true });
    for (const delta of after) steps.push({ data: { type: "content_block_delta", index: at, delta } });
    steps.push({ data: { type: "content_block_stop", index: at } });
  };
  const reasoning = script.reasoning ?? [];
  if (reasoning.length > 0) {
    block(
      { type: "thinking", thinking: "", signature: "" },
      reasoning.map((thinking) => ({ type: "thinking_delta", thinking })),
      [{ type: "signature_delta", signature: signatureOf(reasoning.join("")) }],
    );
  }
  const text = script.text ?? [];
  if (text.length > 0) block({ type: "text", text: "" }, text.map((piece) => ({ type: "text_delta", text: piece })));
  (script.toolCalls ?? []).forEach((call, i) => {
    const fragments = typeof call.args === "string" ? [call.args] : call.args;
    block(
      { type: "tool_use", id: call.id ?? `toolu_${ex.requestId}_${i}`, name: call.name, input: {} },
      fragments.map((partial_json) => ({ type: "input_json_delta", partial_json })),
    );
  });
  return steps;
}

const STOP_REASONS: Record<string, string> = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens", content_filter: "refusal" };

/** message_start's usage: input counted apart from the cache's reads and writes, as the API does. */
function startUsage(ex: Exchange, script?: FakeReplyScript): Json {
  const read = script?.usage?.cached_tokens ?? 0;
  const written = script?.usage?.cache_write_tokens ?? 0;
  const prompt = script?.usage?.prompt_tokens ?? estimateTokens(ex);
  return {
    input_tokens: Math.max(0, prompt - read - written),
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    output_tokens: 1,
  };
}

function message(ex: Exchange, usage: Json): Json {
  return {
    type: "message_start",
    message: { id: `msg_${ex.requestId}`, type: "message", role: "assistant", model: ex.body.model, content: [], stop_reason: null, stop_sequence: null, usage },
  };
}

async function failMidStream(ex: Exchange, failure: NonNullable<FakeReplyScript["streamError"]>): Promise<void> {
  await event(ex, { type: "error", error: { type: failure.code ?? "overloaded_error", message: failure.message ?? "Overloaded" } });
  if (!ex.isClosed()) ex.res.end();
}

async function streamReply(ex: Exchange, script: FakeReplyScript): Promise<void> {
  const flushed = script.cutAfter !== undefined;
  startSse(ex);
  const usage = startUsage(ex, script);
  await event(ex, message(ex, usage), flushed);
  let sent = 0;
  const stop = (): (() => Promise<void> | void) | undefined => {
    if (script.cutAfter !== undefined && sent >= script.cutAfter) return () => cut(ex);
    if (script.hangAfter !== undefined && sent >= script.hangAfter) return () => {};
    if (script.malformedAfter !== undefined && sent >= script.malformedAfter) return () => malformed(ex);
    if (script.streamError && sent >= script.streamError.after) return () => failMidStream(ex, script.streamError!);
    return undefined;
  };
  for (const step of replySteps(ex, script)) {
    if (ex.isClosed()) return;
    if (step.delta) {
      const end = stop();
      if (end) return end();
    }
    await event(ex, step.data, flushed);
    if (step.delta) {
      sent += 1;
      if (script.delayMs) await ex.sleep(script.delayMs);
    }
  }
  const end = stop();
  if (end) return end();
  if (ex.isClosed()) return;
  const finish = finishOf(script);
  if (finish !== null) {
    const output = script.usage?.completion_tokens ?? sent;
    const details = script.usage?.reasoning_tokens !== undefined ? { output_tokens_details: { thinking_tokens: script.usage.reasoning_tokens } } : {};
    await event(ex, { type: "message_delta", delta: { stop_reason: STOP_REASONS[finish] ?? finish, stop_sequence: null }, usage: { output_tokens: output, ...details } });
    await event(ex, { type: "message_stop" });
  }
  if (!ex.isClosed()) ex.res.end();
}

async function streamPaced(ex: Exchange, tokens: number, delayMs: number): Promise<void> {
  startSse(ex);
  await event(ex, message(ex, startUsage(ex)));
  await event(ex, { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
  for (let i = 0; i < tokens; i++) {
    if (ex.isClosed()) return;
    if (delayMs > 0 && i > 0) await ex.sleep(delayMs);
    await event(ex, { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: stampToken() } });
  }
  if (ex.isClosed()) return;
  await event(ex, { type: "content_block_stop", index: 0 });
  await event(ex, { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: tokens } });
  await event(ex, { type: "message_stop" });
  if (!ex.isClosed()) ex.res.end();
}

/** Answers one valid Messages request (always streamed: validation refused the others). */
export async function playAnthropic(ex: Exchange, script: FakeScript): Promise<void> {
  if (script.kind === "error") {
    ex.res.writeHead(script.status, {
      "content-type": script.rawBody === undefined ? "application/json" : "text/plain",
      "request-id": ex.requestId,
      ...script.headers,
    });
    ex.res.end(script.rawBody ?? anthropicErrorBody(script.status, script.message, script.type));
    return;
  }
  if (script.kind === "hang") {
    if (script.when === "after_headers") startSse(ex);
    return;
  }
  if (script.kind === "paced") return streamPaced(ex, script.tokens, script.delayMs);
  return streamReply(ex, script);
}
