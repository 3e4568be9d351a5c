/**
 * What one open conversation looks like, built from its records and then
 * kept current by its notifications. Everything is keyed — messages by record
 * id, tool calls by toolCallId — and every event's `seq` is remembered, so a
 * replay after a reconnect (or a reload after resync) can never show a
 * message twice.
 */
import type {
  ConversationGetResult,
  ConversationRecord,
  MessageRecord,
  NotificationMethod,
  NotificationParams,
  ToolCall,
} from "../typescript/index.js";
import { el } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { ToolCard, type ToolDecision, type ToolStatus } from "./tool-card.js";

export class ConversationView {
  /** A log: screen readers announce what is appended (a finished message, a tool card), not every streamed delta. */
  readonly node = el("div", { class: "messages", attrs: { role: "log", "aria-live": "polite", "aria-label": "Messages" } });
  /** Seq of the last event applied: subscribe with afterSeq = this after a reconnect. */
  lastSeq = 0;
  generating = false;
  readonly #messages = new Map<string, HTMLElement>();
  readonly #tools = new Map<string, ToolCard>();
  #live: { node: HTMLElement; text: string; reasoning: string; body: HTMLElement; thinking: HTMLDetailsElement } | undefined;

  constructor(
    readonly conversationId: string,
    private readonly decide: (toolCallId: string, decision: ToolDecision) => Promise<void>,
    private readonly onChange: () => void,
  ) {}

  /** Start over from a full conversation.get (first open, or after resync). */
  load(got: ConversationGetResult): void {
    this.node.replaceChildren();
    this.#messages.clear();
    this.#tools.clear();
    this.#live = undefined;
    for (const record of got.records ?? []) this.#upsertRecord(record);
    for (const pending of got.state.pendingTools) this.#upsertTool(pending, "pending");
    this.generating = got.state.generating;
    this.lastSeq = got.state.seq;
    if (got.state.lastError) this.#notice(`error: ${got.state.lastError.message}`);
    this.onChange();
  }

  /** One notification of this conversation; events already applied (seq ≤ lastSeq) are ignored. */
  apply<N extends NotificationMethod>(method: N, params: NotificationParams<N>): void {
    const p = params as { seq?: number };
    if (typeof p.seq === "number") {
      if (p.seq <= this.lastSeq) return;
      this.lastSeq = p.seq;
    }
    const n = params as NotificationParams<any>;
    switch (method) {
      case "message_added":
        if (n.record.role === "assistant") this.#endLive();
        this.#upsertRecord(n.record);
        break;
      case "generation_started":
        this.generating = true;
        break;
      case "generation_progress":
        this.#progress(n.kind, n.delta);
        break;
      case "generation_complete":
        if (n.final) this.generating = false;
        break;
      case "tool_pending":
        this.#upsertTool(n, n.autoConfirmed ? "executing" : "pending");
        break;
      case "tool_executing":
        this.#upsertTool(n, "executing", n.edited);
        break;
      case "tool_output":
        this.#tools.get(n.toolCallId)?.appendOutput(n.chunk);
        break;
      case "tool_completed":
      case "tool_failed":
      case "tool_skipped":
        this.#upsertRecord(n.record);
        break;
      case "interrupted":
        this.generating = false;
        this.#endLive();
        this.#notice(`interrupted (${n.phase})`);
        break;
      case "error":
        this.generating = false;
        this.#endLive();
        this.#notice(`error: ${n.message}`);
        break;
    }
    this.onChange();
    this.node.lastElementChild?.scrollIntoView({ block: "end" });
  }

  #upsertRecord(record: ConversationRecord): void {
    if (record.type === "tool_call") {
      this.#upsertTool(record, record.status, record.edited, record.result, record.diff);
      return;
    }
    // A compaction summary (conversation.compact) is not shown yet: the web client's compaction view comes later.
    if (record.type === "compaction") return;
    const fresh = messageNode(record);
    const existing = this.#messages.get(record.id);
    if (existing) existing.replaceWith(fresh);
    else this.#insert(fresh);
    this.#messages.set(record.id, fresh);
  }

  /** Before the live bubble, which stays last while a reply streams. */
  #insert(node: HTMLElement): void {
    if (this.#live) this.node.insertBefore(node, this.#live.node);
    else this.node.append(node);
  }

  #upsertTool(call: ToolCall, status: ToolStatus, edited?: boolean, result?: string | null, diff?: string): void {
    const data = { toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments, status, edited, result, diff };
    const existing = this.#tools.get(call.toolCallId);
    if (existing) {
      existing.update(data);
      return;
    }
    const card = new ToolCard(data, (decision) => this.decide(call.toolCallId, decision));
    this.#tools.set(call.toolCallId, card);
    this.#insert(card.node);
  }

  /** The tool call waiting longest for a decision (the keyboard shortcuts act on it). */
  firstPending(): ToolCard | undefined {
    for (const card of this.#tools.values()) if (card.node.dataset.status === "pending") return card;
    return undefined;
  }

  #progress(kind: "text" | "reasoning", delta: string): void {
    if (!this.#live) {
      const thinking = el("details", { class: "reasoning" }, el("summary", { text: "reasoning" }), el("div", { class: "reasoning-body" }));
      thinking.hidden = true;
      const body = el("div", { class: "content" });
      // aria-busy: the reply is read out once, as its stored message, not delta by delta.
      const node = el("div", { class: "message assistant streaming", attrs: { "aria-busy": "true" } }, el("div", { class: "role", text: "assistant" }), thinking, body);
      this.node.append(node);
      this.#live = { node, text: "", reasoning: "", body, thinking };
    }
    const live = this.#live;
    if (kind === "reasoning") {
      live.reasoning += delta;
      live.thinking.hidden = false;
      live.thinking.querySelector(".reasoning-body")!.textContent = live.reasoning;
    } else {
      live.text += delta;
      live.body.innerHTML = renderMarkdown(live.text);
    }
  }

  /**
   * The streamed reply gives way to its stored message: the server stores what
   * was said (partial text too, on interrupt) and announces it with message_added.
   */
  #endLive(): void {
    this.#live?.node.remove();
    this.#live = undefined;
  }

  #notice(text: string): void {
    this.node.append(el("div", { class: "notice", text }));
  }
}

function messageNode(record: MessageRecord): HTMLElement {
  const body = el("div", { class: "content" });
  if (record.role === "assistant") body.innerHTML = renderMarkdown(record.content);
  else body.textContent = record.content;
  const node = el("div", { class: `message ${record.role}`, attrs: { "data-record-id": record.id } }, el("div", { class: "role", text: record.role }));
  if (record.reasoning) {
    node.append(el("details", { class: "reasoning" }, el("summary", { text: "reasoning" }), el("div", { class: "reasoning-body", text: record.reasoning })));
  }
  node.append(body);
  return node;
}
