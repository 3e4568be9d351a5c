/**
 * How `agentwire chat` shows a conversation as text: the answer streams to
 * stdout as it arrives (so `agentwire chat "…" > answer.txt` captures just
 * the answer); reasoning (dimmed), tool calls with the diff of what they
 * change, tool output, outcomes, the plan, notices, errors and the turn's
 * usage go to stderr. A spinner on stderr fills the silences.
 */
import type { NotificationMethod, NotificationParams, ToolCallRecord, UsageUpdatedNotification } from "../../clients/typescript/index.js";
import type { SessionView } from "./chat-session.js";
import { describeError } from "./chat-session.js";
import { compactLine } from "./history-actions.js";
import { planLines } from "./plan-lines.js";
import { type Palette, printable } from "./render.js";
import type { Spinner } from "./spinner.js";
import { recomputedSuffix, toolCallLines } from "./tool-call-lines.js";
import { usageLine } from "./usage-line.js";

export class TerminalView implements SessionView {
  /** Whether the last thing written to stdout ended a line (the answer's text may not). */
  #outAtLineStart = true;
  #errAtLineStart = true;
  #streamedText = false;
  #inReasoning = false;
  /** While a question is on screen, output waits here: a line written into the prompt would garble it. */
  #held: Array<[NodeJS.WritableStream, string]> | undefined;
  /** The latest usage_updated of each running generation (with a reported usage), for the line at its end. */
  readonly #usage = new Map<string, UsageUpdatedNotification>();
  /** The plan last shown, so an update_plan call that changes nothing is not printed again. */
  #plan: string | undefined;

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
        // A line typed while the agent worked, now taken: into the running generation (steered) or starting one (queued).
        if (p.delivery) {
          this.spinner.stop();
          this.#endOutLine();
          this.#errLine(this.colors.dim(`↳ ${p.delivery === "steered" ? "steered" : "queued message taken"}: ${printable(oneLine(p.record.content))}`));
        }
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
        if (p.final) this.#usageLine(p.generationId);
        break;
      case "compaction_started":
        if (!this.#held) this.spinner.start("compacting the conversation");
        break;
      case "compaction_completed":
        this.spinner.stop();
        this.#endOutLine();
        this.#errLine(this.colors.dim(compactLine(p.record)));
        break;
      case "tool_pending":
        if (this.promptShowsCalls && !p.autoConfirmed) break;
        this.spinner.stop();
        this.#endOutLine();
        // Asked about elsewhere (no terminal: skipped, saying so) or run at once: either way, what it is and what it changes.
        for (const line of toolCallLines(p, this.colors, p.autoConfirmed ? { suffix: "(runs without asking)" } : { withArguments: true })) this.#errLine(line);
        break;
      case "tool_executing":
        if (p.changes !== undefined) {
          // Not the change shown before: the arguments were edited, or an earlier call changed the file.
          this.spinner.stop();
          this.#endOutLine();
          for (const line of toolCallLines(p, this.colors, { suffix: recomputedSuffix(p) })) this.#errLine(line);
        }
        if (!this.#held) this.spinner.start(`running ${p.toolName}`);
        break;
      case "subagent_started":
        // Its tool calls and questions are asked here too (chat-session.ts follows the child while it runs).
        this.spinner.stop();
        this.#endOutLine();
        this.#errLine(this.colors.dim(`⤷ sub-agent started: conversation ${p.childConversationId} (depth ${p.agentDepth})`));
        if (!this.#held) this.spinner.start("the sub-agent works");
        break;
      case "plan_updated": {
        const plan = JSON.stringify(p.entries);
        if (plan === this.#plan) break;
        this.#plan = plan;
        this.spinner.stop();
        this.#endOutLine();
        for (const line of planLines(p.entries, this.colors)) this.#errLine(line);
        break;
      }
      case "usage_updated":
        if (p.last !== null || this.#usage.has(p.generationId)) this.#usage.set(p.generationId, p);
        break;
      case "notice":
        // Never on stdout: the answer there stays the answer.
        this.spinner.stop();
        this.#errLine(
          p.level === "warning" ? this.colors.yellow(`agentwire: warning: ${printable(p.message)}`) : this.colors.dim(`agentwire: info: ${printable(p.message)}`),
        );
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
        this.#usageLine(p.generationId);
        break;
      case "error":
        this.spinner.stop();
        this.#endOutLine();
        this.#errLine(this.colors.red(`error: ${p.message}${p.status ? ` (HTTP ${p.status})` : ""}`));
        if (p.generationId) this.#usageLine(p.generationId);
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

  /** The turn is over: what its model calls used, when the endpoint said. */
  #usageLine(generationId: string): void {
    const usage = this.#usage.get(generationId);
    this.#usage.delete(generationId);
    if (usage) this.#errLine(this.colors.dim(usageLine(usage)));
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

/** A message's first line, shortened, for a one-line status. */
function oneLine(text: string): string {
  const first = text.split("\n")[0]!;
  return first.length > 80 || text.includes("\n") ? `${first.slice(0, 80)}…` : first;
}
