/**
 * How `agentwire chat` shows a conversation as text: the answer streams to
 * stdout as it arrives (so `agentwire chat "…" > answer.txt` captures just
 * the answer); reasoning (dimmed), tool calls, tool output, outcomes and
 * errors go to stderr. A spinner on stderr fills the silences.
 */
import type { NotificationMethod, NotificationParams, ToolCallRecord } from "../../clients/typescript/index.js";
import type { SessionView } from "./chat-session.js";
import { describeError } from "./chat-session.js";
import { formatArguments, type Palette } from "./render.js";
import type { Spinner } from "./spinner.js";

export class TerminalView implements SessionView {
  /** Whether the last thing written to stdout ended a line (the answer's text may not). */
  #outAtLineStart = true;
  #errAtLineStart = true;
  #streamedText = false;
  #inReasoning = false;
  /** While a question is on screen, output waits here: a line written into the prompt would garble it. */
  #held: Array<[NodeJS.WritableStream, string]> | undefined;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly err: NodeJS.WritableStream,
    private readonly colors: Palette,
    private readonly spinner: Spinner,
    /** The tool prompt shows each call it asks about, so tool_pending lines are only for calls that run unasked. */
    private readonly promptShowsCalls = false,
  ) {}

  /** Keep output back (a question is being asked). */
  hold(): void {
    this.spinner.stop();
    this.#held ??= [];
  }

  /** Write what was held back, in order. */
  release(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const [stream, text] of held) stream.write(text);
  }

  notification<N extends NotificationMethod>(method: N, params: NotificationParams<N>): void {
    const p = params as any;
    switch (method) {
      case "generation_started":
        this.#streamedText = false;
        if (!this.#held) this.spinner.start("waiting for the model");
        break;
      case "generation_progress":
        this.spinner.stop();
        if (p.kind === "reasoning") {
          this.#inReasoning = true;
          this.#err(p.delta, this.colors.dim);
        } else {
          if (this.#inReasoning) this.#endErrLine();
          this.#inReasoning = false;
          this.#streamedText = true;
          this.#out(p.delta);
        }
        break;
      case "message_added":
        // An answer that was not streamed (a notice, or progress coalesced away) is shown whole.
        if (p.record.role === "assistant" && !this.#streamedText && p.record.content) {
          this.spinner.stop();
          if (p.record.notice) this.#errLine(this.colors.yellow(p.record.content));
          else this.#out(p.record.content);
        }
        break;
      case "generation_complete":
        this.spinner.stop();
        if (this.#inReasoning) this.#endErrLine();
        this.#inReasoning = false;
        this.#endOutLine();
        break;
      case "tool_pending":
        if (this.promptShowsCalls && !p.autoConfirmed) break;
        this.spinner.stop();
        this.#endOutLine();
        this.#errLine(
          `${this.colors.cyan("⚙ " + p.toolName)} ${formatArguments(p.arguments)}${p.autoConfirmed ? this.colors.dim(" (runs without asking)") : ""}`,
        );
        break;
      case "tool_executing":
        if (!this.#held) this.spinner.start(`running ${p.toolName}`);
        break;
      case "tool_output":
        this.spinner.stop();
        this.#err(p.chunk, this.colors.dim);
        break;
      case "tool_completed":
      case "tool_failed":
        this.spinner.stop();
        this.#endErrLine();
        this.#errLine(this.#toolOutcome(p.record as ToolCallRecord));
        break;
      case "tool_skipped":
        this.spinner.stop();
        this.#endErrLine();
        this.#errLine(this.colors.yellow(`↷ ${p.record.toolName} skipped (${p.reason})`));
        break;
      case "interrupted":
        this.spinner.stop();
        this.#endOutLine();
        this.#errLine(this.colors.yellow(`[interrupted while ${p.phase}]`));
        break;
      case "error":
        this.spinner.stop();
        this.#endOutLine();
        this.#errLine(this.colors.red(`error: ${p.message}${p.status ? ` (HTTP ${p.status})` : ""}`));
        break;
    }
  }

  result(): void {}

  requestFailed(method: string, error: unknown): void {
    this.spinner.stop();
    this.#endOutLine();
    this.#errLine(this.colors.red(`agentwire: ${method} failed: ${describeError(error)}`));
  }

  /** A line of status on stderr (REPL hints, the interrupt notice). */
  note(text: string): void {
    this.spinner.stop();
    this.#endOutLine();
    this.#errLine(this.colors.dim(text));
  }

  #toolOutcome(record: ToolCallRecord): string {
    const exit = record.exitCode !== undefined && record.exitCode !== null ? ` (exit ${record.exitCode})` : "";
    if (record.status === "completed") return this.colors.green(`✓ ${record.toolName}${exit}`);
    const reason = (record.result ?? "").split("\n")[0]!.slice(0, 200);
    return this.colors.red(`✗ ${record.toolName} failed${exit}${reason ? `: ${reason}` : ""}`);
  }

  #out(text: string): void {
    if (!text) return;
    this.#write(this.out, text);
    this.#outAtLineStart = text.endsWith("\n");
  }

  /** Raw text through `style`; the line bookkeeping looks at the text, not the escape codes. */
  #err(text: string, style: (text: string) => string): void {
    if (!text) return;
    this.#write(this.err, style(text));
    this.#errAtLineStart = text.endsWith("\n");
  }

  #errLine(text: string): void {
    this.#endErrLine();
    this.#write(this.err, `${text}\n`);
    this.#errAtLineStart = true;
  }

  #write(stream: NodeJS.WritableStream, text: string): void {
    if (this.#held) this.#held.push([stream, text]);
    else stream.write(text);
  }

  /** Before a question: end a half-written answer line so the question starts on its own. */
  endLine(): void {
    this.#endOutLine();
    this.#endErrLine();
  }

  #endOutLine(): void {
    if (!this.#outAtLineStart) this.#write(this.out, "\n");
    this.#outAtLineStart = true;
  }

  #endErrLine(): void {
    if (!this.#errAtLineStart) this.#write(this.err, "\n");
    this.#errAtLineStart = true;
  }
}
