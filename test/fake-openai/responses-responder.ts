/**
 * Plays one script onto an HTTP response in the Responses API's streaming
 * format (`POST /v1/responses`, `stream: true`): typed SSE events
 * (`event: <type>` + `data: <json>` with a `sequence_number`), one output
 * item per reasoning block, message and function call, then
 * `response.completed` (or `response.incomplete`) carrying the whole
 * response with its output and usage.
 */
import { cut, estimateTokens, finishOf, malformed, sendError, startSse, write, type Exchange } from "./responder.js";
import { stampToken, type FakeReplyScript, type FakeScript } from "./scripts.js";

type Json = Record<string, unknown>;

/** The encrypted_content this fake issues: recognisable, so a request can prove it sent one back verbatim. */
export const ENCRYPTED_PREFIX = "enc_fake_";

function encrypt(text: string, requestId: string): string {
  return ENCRYPTED_PREFIX + Buffer.from(JSON.stringify({ requestId, text })).toString("base64");
}

/** One event to write; `delta` marks those the script's modifiers count. */
interface Step {
  event: Json;
  delta?: boolean;
}

class ResponsesEvents {
  private sequence = 0;
  readonly createdAt = Math.floor(Date.now() / 1000);
  readonly output: Json[] = [];

  constructor(private readonly ex: Exchange) {}

  response(status: string, extra: Json = {}): Json {
    return {
      id: `resp_${this.ex.requestId}`,
      object: "response",
      created_at: this.createdAt,
      status,
      model: this.ex.body.model,
      output: status === "in_progress" ? [] : this.output,
      usage: null,
      error: null,
      incomplete_details: null,
      store: this.ex.body.store ?? true,
      ...extra,
    };
  }

  text(event: Json, flushed = false): Promise<void> {
    const full = { ...event, sequence_number: this.sequence++ };
    return write(this.ex, `event: ${String(event.type)}\ndata: ${JSON.stringify(full)}\n\n`, flushed);
  }
}

function wantsEncrypted(ex: Exchange): boolean {
  return Array.isArray(ex.body.include) && ex.body.include.includes("reasoning.encrypted_content");
}

/** The item events of a reply, in output order (without created / completed). */
function replySteps(ex: Exchange, script: FakeReplyScript, out: ResponsesEvents): Step[] {
  const steps: Step[] = [];
  let index = 0;
  const itemSteps = (id: string, added: Json, deltas: Step[], done: Json, after: Step[] = []) => {
    const output_index = index++;
    steps.push({ event: { type: "response.output_item.added", output_index, item: { id, ...added } } });
    steps.push(...deltas.map((s) => ({ ...s, event: { ...s.event, item_id: id, output_index } })));
    steps.push(...after.map((s) => ({ ...s, event: { ...s.event, item_id: id, output_index } })));
    const item = { id, ...done };
    out.output.push(item);
    steps.push({ event: { type: "response.output_item.done", output_index, item } });
  };

  const reasoning = script.reasoning ?? [];
  if (reasoning.length > 0) {
    const text = reasoning.join("");
    const done: Json = { type: "reasoning", summary: [{ type: "summary_text", text }] };
    if (wantsEncrypted(ex)) done.encrypted_content = encrypt(text, ex.requestId);
    itemSteps(
      `rs_${ex.requestId}`,
      { type: "reasoning", summary: [] },
      [
        { event: { type: "response.reasoning_summary_part.added", summary_index: 0, part: { type: "summary_text", text: "" } } },
        ...reasoning.map((delta) => ({ event: { type: "response.reasoning_summary_text.delta", summary_index: 0, delta }, delta: true })),
      ],
      done,
      [
        { event: { type: "response.reasoning_summary_text.done", summary_index: 0, text } },
        { event: { type: "response.reasoning_summary_part.done", summary_index: 0, part: { type: "summary_text", text } } },
      ],
    );
  }
  const text = script.text ?? [];
  if (text.length > 0) {
    const whole = text.join("");
    const part = { type: "output_text", text: whole, annotations: [] };
    itemSteps(
      `msg_${ex.requestId}`,
      { type: "message", status: "in_progress", role: "assistant", content: [] },
      [
        { event: { type: "response.content_part.added", content_index: 0, part: { type: "output_text", text: "", annotations: [] } } },
        ...text.map((delta) => ({ event: { type: "response.output_text.delta", content_index: 0, delta, logprobs: [] }, delta: true })),
      ],
      { type: "message", status: "completed", role: "assistant", content: [part] },
      [
        { event: { type: "response.output_text.done", content_index: 0, text: whole, logprobs: [] } },
        { event: { type: "response.content_part.done", content_index: 0, part } },
      ],
    );
  }
  // Unlike chat's fragments, function calls stream one item after the other.
  (script.toolCalls ?? []).forEach((call, i) => {
    const fragments = typeof call.args === "string" ? [call.args] : call.args;
    const args = fragments.join("");
    const call_id = call.id ?? `call_${i}`;
    itemSteps(
      `fc_${ex.requestId}_${i}`,
      { type: "function_call", status: "in_progress", call_id, name: call.name, arguments: "" },
      fragments.map((delta) => ({ event: { type: "response.function_call_arguments.delta", delta }, delta: true })),
      { type: "function_call", status: "completed", call_id, name: call.name, arguments: args },
      [{ event: { type: "response.function_call_arguments.done", name: call.name, arguments: args } }],
    );
  });
  return steps;
}

function usageOf(ex: Exchange, completion: number, script?: FakeReplyScript): Json {
  const input = script?.usage?.prompt_tokens ?? estimateTokens(ex);
  const output = script?.usage?.completion_tokens ?? completion;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: script?.usage?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: script?.usage?.reasoning_tokens ?? 0 },
    total_tokens: script?.usage?.total_tokens ?? input + output,
  };
}

async function failMidStream(ex: Exchange, out: ResponsesEvents, failure: NonNullable<FakeReplyScript["streamError"]>): Promise<void> {
  const message = failure.message ?? "The server had an error while processing your request.";
  const code = failure.code ?? "server_error";
  if (failure.event === "error") await out.text({ type: "error", code, message, param: null });
  else await out.text({ type: "response.failed", response: out.response("failed", { error: { code, message } }) });
  if (!ex.isClosed()) ex.res.end();
}

async function streamReply(ex: Exchange, script: FakeReplyScript): Promise<void> {
  const out = new ResponsesEvents(ex);
  const flushed = script.cutAfter !== undefined;
  startSse(ex);
  await out.text({ type: "response.created", response: out.response("in_progress") });
  await out.text({ type: "response.in_progress", response: out.response("in_progress") }, flushed);
  const steps = replySteps(ex, script, out);
  let sent = 0;
  const stop = (): (() => Promise<void> | void) | undefined => {
    if (script.cutAfter !== undefined && sent >= script.cutAfter) return () => cut(ex);
    if (script.hangAfter !== undefined && sent >= script.hangAfter) return () => {};
    if (script.malformedAfter !== undefined && sent >= script.malformedAfter) return () => malformed(ex);
    if (script.streamError && sent >= script.streamError.after) return () => failMidStream(ex, out, script.streamError!);
    return undefined;
  };
  for (const step of steps) {
    if (ex.isClosed()) return;
    if (step.delta) {
      const end = stop();
      if (end) return end();
    }
    await out.text(step.event, flushed);
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
    const usage = usageOf(ex, sent, script);
    if (finish === "length") {
      await out.text({ type: "response.incomplete", response: out.response("incomplete", { usage, incomplete_details: { reason: "max_output_tokens" } }) });
    } else {
      await out.text({ type: "response.completed", response: out.response("completed", { usage }) });
    }
  }
  if (!ex.isClosed()) ex.res.end();
}

async function streamPaced(ex: Exchange, tokens: number, delayMs: number): Promise<void> {
  const out = new ResponsesEvents(ex);
  startSse(ex);
  const id = `msg_${ex.requestId}`;
  await out.text({ type: "response.created", response: out.response("in_progress") });
  await out.text({ type: "response.output_item.added", output_index: 0, item: { id, type: "message", status: "in_progress", role: "assistant", content: [] } });
  let text = "";
  for (let i = 0; i < tokens; i++) {
    if (ex.isClosed()) return;
    if (delayMs > 0 && i > 0) await ex.sleep(delayMs);
    const delta = stampToken();
    text += delta;
    await out.text({ type: "response.output_text.delta", item_id: id, output_index: 0, content_index: 0, delta, logprobs: [] });
  }
  if (ex.isClosed()) return;
  const item = { id, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] };
  out.output.push(item);
  await out.text({ type: "response.output_item.done", output_index: 0, item });
  await out.text({ type: "response.completed", response: out.response("completed", { usage: usageOf(ex, tokens) }) });
  if (!ex.isClosed()) ex.res.end();
}

/** Answers one valid Responses request (always streamed: validation refused the others). */
export async function playResponses(ex: Exchange, script: FakeScript): Promise<void> {
  if (script.kind === "error") return sendError(ex, script);
  if (script.kind === "hang") {
    if (script.when === "after_headers") startSse(ex);
    return;
  }
  if (script.kind === "paced") return streamPaced(ex, script.tokens, script.delayMs);
  return streamReply(ex, script);
}
