/**
 * `agentwire chat --json`: one JSON object per line on stdout for every
 * notification of the conversation, every request's result or error, and a
 * last `end` line with the outcome and exit status — for scripts that want
 * all of it without speaking the protocol themselves.
 *
 *   {"type":"notification","method":"generation_progress","params":{…}}
 *   {"type":"result","method":"step","result":{"generationId":"g_…"}}
 *   {"type":"error","method":"step","error":{"code":-32031,"message":"…"}}
 *   {"type":"end","outcome":"completed","exitCode":0}
 */
import { AgentwireRpcError } from "../../clients/typescript/index.js";
import type { SessionView, TurnOutcome } from "./chat-session.js";
import { exitCodeOf } from "./chat-session.js";

export class NdjsonView implements SessionView {
  constructor(private readonly out: NodeJS.WritableStream) {}

  notification(method: string, params: unknown): void {
    this.#line({ type: "notification", method, params });
  }

  result(method: string, result: unknown): void {
    this.#line({ type: "result", method, result });
  }

  requestFailed(method: string, error: unknown): void {
    const e = error as { code?: unknown; message?: string; data?: unknown };
    const body = error instanceof AgentwireRpcError ? { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } : { message: e?.message ?? String(error) };
    this.#line({ type: "error", method, error: body });
  }

  end(outcome: TurnOutcome): void {
    this.#line({ type: "end", outcome: outcome.kind, exitCode: exitCodeOf(outcome), ...(outcome.kind === "error" ? { message: outcome.message } : {}) });
  }

  #line(value: unknown): void {
    this.out.write(`${JSON.stringify(value)}\n`);
  }
}
