/**
 * `agentwire chat --json`: one JSON object per line on stdout for every
 * notification of the conversation (and every server-wide notice), every
 * request's result or error, and a last `end` line with the outcome, the exit
 * status and the turn's usage totals (its last usage_updated's `generation`,
 * when there was one) — for scripts that want all of it without speaking the
 * protocol themselves.
 *
 *   {"type":"notification","method":"generation_progress","params":{…}}
 *   {"type":"result","method":"step","result":{"generationId":"g_…"}}
 *   {"type":"error","method":"step","error":{"code":-32031,"message":"…"}}
 *   {"type":"end","outcome":"completed","exitCode":0,"usage":{"modelCalls":1,"promptTokens":…}}
 */
import { AgentwireRpcError, type UsageTotals } from "../../clients/typescript/index.js";
import type { SessionView, TurnOutcome } from "./chat-session.js";
import { exitCodeOf } from "./chat-session.js";

export class NdjsonView implements SessionView {
  /** The generation the last `step` started: the turn `end` reports on. */
  #turn: string | undefined;
  /** Usage totals by generation (usage_updated may come before `step`'s answer names the generation). */
  readonly #usage = new Map<string, UsageTotals>();

  constructor(private readonly out: NodeJS.WritableStream) {}

  notification(method: string, params: unknown): void {
    if (method === "usage_updated") {
      const usage = params as { generationId: string; generation: UsageTotals };
      this.#usage.set(usage.generationId, usage.generation);
    }
    this.#line({ type: "notification", method, params });
  }

  result(method: string, result: unknown): void {
    if (method === "step") this.#turn = (result as { generationId: string }).generationId;
    this.#line({ type: "result", method, result });
  }

  requestFailed(method: string, error: unknown): void {
    const e = error as { code?: unknown; message?: string; data?: unknown };
    const body = error instanceof AgentwireRpcError ? { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } : { message: e?.message ?? String(error) };
    this.#line({ type: "error", method, error: body });
  }

  end(outcome: TurnOutcome): void {
    const usage = this.#turn === undefined ? undefined : this.#usage.get(this.#turn);
    this.#line({
      type: "end",
      outcome: outcome.kind,
      exitCode: exitCodeOf(outcome),
      ...(outcome.kind === "error" ? { message: outcome.message } : {}),
      ...(usage ? { usage } : {}),
    });
  }

  #line(value: unknown): void {
    this.out.write(`${JSON.stringify(value)}\n`);
  }
}
