/**
 * What one open conversation looks like, built from its records and then
 * kept current by its notifications. Everything is keyed — messages by record
 * id, tool calls by toolCallId — and every event's `seq` is remembered, so a
 * replay after a reconnect (or a reload after resync) can never show a
 * message twice.
 *
 * Besides the messages and tool cards: the plan as a checklist above them
 * (plan_updated, state.plan), each turn's net file change after it
 * (generation_diff_updated, or the records' netChange after a reload), and
 * what the app shows outside the conversation (usage_updated for the context
 * meter, notices) handed on through hooks.
 */
import type {
  CompactionRecord,
  ConversationGetResult,
  ConversationRecord,
  MessageRecord,
  NotificationMethod,
  NotificationParams,
  ToolCall,
} from "../typescript/index.js";
import type { FileChange } from "./diff-view.js";
import { el, iconButton } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { PlanView } from "./plan-view.js";
import { QuestionCard, type InputResponse } from "./question-card.js";
import { ToolCard, type ToolCardData, type ToolDecision, type ToolStatus } from "./tool-card.js";
import { TurnChanges } from "./turn-changes.js";

type QueuedMessage = NotificationParams<"queue_changed">["messages"][number];

/** What the view hands to the rest of the page. */
export interface ViewHooks {
  decide: (toolCallId: string, decision: ToolDecision) => Promise<void>;
  /** Called after every change (the app redraws its controls). */
  onChange: () => void;
  onUsage: (usage: NotificationParams<"usage_updated">) => void;
  onNotice: (notice: NotificationParams<"notice">) => void;
  /** The tool's kind from tools.list, for a card built from a record (records carry no kind). */
  toolKind: (toolName: string) => string | undefined;
  /** "Rewind to here" on a user message: the app asks, then calls conversation.rewind. */
  rewind: (recordId: string, anchor: HTMLElement) => void;
  /** The remove button of a held (steered or queued) message: queue.remove. */
  removeHeld: (recordId: string) => void;
  /** conversation_rewound: the records changed under the view; the app reloads them (conversation.get). */
  onRewound: (notification: NotificationParams<"conversation_rewound">) => void;
  /** A question card's answer, decline or cancel: input.respond (rejects with the server's error). */
  respond: (requestId: string, response: InputResponse) => Promise<void>;
}

export class ConversationView {
  /** A log: screen readers announce what is appended (a finished message, a tool card), not every streamed delta. */
  readonly #log = el("div", { class: "messages", attrs: { role: "log", "aria-live": "polite", "aria-label": "Messages" } });
  readonly #plan = new PlanView();
  /**
   * Messages the server holds (steered into the running generation, or queued
   * for the next): pending bubbles below the log until their message_added.
   */
  readonly #held = el("div", { class: "held-messages", attrs: { "aria-label": "Messages waiting to be sent to the model" } });
  /** What the app says about the last rewind (and its undo); kept across reloads. */
  readonly banner = el("div", { class: "banner", attrs: { role: "status" } });
  readonly node = el("div", { class: "conversation-view" }, this.#plan.node, this.#log, this.#held, this.banner);
  /** The running generation (expectedGenerationId of a steered or queued message), null when none runs. */
  generationId: string | null = null;
  #compacting: HTMLElement | undefined;
  /** Each turn's "Changes in this turn" panel, by generationId. */
  readonly #turnChanges = new Map<string, TurnChanges>();
  /** Seq of the last event applied: subscribe with afterSeq = this after a reconnect. */
  lastSeq = 0;
  generating = false;
  readonly #messages = new Map<string, HTMLElement>();
  readonly #tools = new Map<string, ToolCard>();
  /** Open questions (and closed ones still shown), by requestId. */
  readonly #questions = new Map<string, QuestionCard>();
  #live: { node: HTMLElement; text: string; reasoning: string; body: HTMLElement; thinking: HTMLDetailsElement } | undefined;

  constructor(
    readonly conversationId: string,
    private readonly hooks: ViewHooks,
  ) {}

  /** Start over from a full conversation.get (first open, or after resync). */
  load(got: ConversationGetResult): void {
    this.#log.replaceChildren();
    this.#messages.clear();
    this.#tools.clear();
    this.#questions.clear();
    this.#turnChanges.clear();
    this.#live = undefined;
    this.#compacting = undefined;
    for (const record of got.records ?? []) this.#upsertRecord(record);
    this.setHeld(got.state.queue);
    this.generationId = got.state.generationId;
    for (const pending of got.state.pendingTools) this.#upsertTool(pending, "pending", { kind: pending.kind, title: pending.title, locations: pending.locations, changes: pending.changes, rememberAs: pending.rememberAs });
    for (const request of got.state.pendingInputs ?? []) this.#ask(request);
    this.#restoreTurnChanges(got.records ?? []);
    this.#plan.set(got.state.plan?.entries ?? null);
    this.generating = got.state.generating;
    this.lastSeq = got.state.seq;
    if (got.state.lastError) this.#notice(`error: ${got.state.lastError.message}`);
    this.hooks.onChange();
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
        this.#dropHeld(n.record.id);
        this.#upsertRecord(n.record);
        break;
      case "reasoning_added":
        this.#upsertRecord(n.record);
        break;
      case "queue_changed":
        this.setHeld(n.messages);
        break;
      case "generation_started":
        this.generating = true;
        this.generationId = n.generationId;
        break;
      case "generation_progress":
        this.#progress(n.kind, n.delta, n.generationId);
        break;
      case "generation_complete":
        if (n.final) {
          this.generating = false;
          this.generationId = null;
          this.#endCompacting();
        }
        break;
      case "tool_pending":
        this.#upsertTool(n, n.autoConfirmed ? "executing" : "pending", { kind: n.kind, title: n.title, locations: n.locations, changes: n.changes, rememberAs: n.rememberAs });
        break;
      case "tool_executing":
        // A recomputed `changes` (edited arguments, or a file changed since) replaces the pending one.
        this.#upsertTool(n, "executing", { edited: n.edited, kind: n.kind, title: n.title, locations: n.locations, changes: n.changes });
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
        this.generationId = null;
        this.#endCompacting();
        this.#endLive();
        this.#notice(`interrupted (${n.phase})`);
        break;
      case "error":
        this.generating = false;
        this.generationId = null;
        this.#endCompacting();
        this.#endLive();
        this.#notice(`error: ${n.message}`);
        break;
      case "plan_updated":
        this.#plan.set(n.entries);
        break;
      case "generation_diff_updated":
        this.#turnChangesOf(n.generationId).set(n.changes);
        break;
      case "usage_updated":
        this.hooks.onUsage(n);
        break;
      case "notice":
        this.hooks.onNotice(n);
        break;
      case "compaction_started":
        this.#endCompacting();
        this.#compacting = el("div", { class: "notice compacting", attrs: { "aria-busy": "true" }, text: "Compacting: the model is summarizing the conversation…" });
        this.#log.append(this.#compacting);
        break;
      case "compaction_completed":
        this.#endCompacting();
        this.#upsertRecord(n.record);
        break;
      case "conversation_rewound":
        this.hooks.onRewound(n);
        break;
      case "input_requested":
        this.#ask(n);
        break;
      case "input_resolved":
        this.#questions.get(n.requestId)?.close(n.outcome);
        break;
      case "subagent_started":
        this.#tools.get(n.toolCallId)?.update({ childConversationId: n.childConversationId });
        break;
    }
    this.hooks.onChange();
    if (method !== "usage_updated" && method !== "notice") this.#log.lastElementChild?.scrollIntoView({ block: "end" });
  }

  /** A question card, after the tool call that asks (when shown), else at the end. */
  #ask(request: QuestionCard["request"] & { generationId?: string }): void {
    if (this.#questions.has(request.requestId)) return;
    const card = new QuestionCard(request, (response) => this.hooks.respond(request.requestId, response));
    this.#questions.set(request.requestId, card);
    const tool = request.toolCallId ? this.#tools.get(request.toolCallId) : undefined;
    if (tool?.node.parentNode === this.#log) tool.node.after(card.node);
    else this.#insert(card.node, request.generationId);
  }

  /** The turn's panel, made (after what the turn showed so far) on its first change. */
  #turnChangesOf(generationId: string): TurnChanges {
    let panel = this.#turnChanges.get(generationId);
    if (!panel) {
      panel = new TurnChanges(generationId);
      this.#turnChanges.set(generationId, panel);
      if (this.#live) this.#log.insertBefore(panel.node, this.#live.node.nextSibling);
      else this.#log.append(panel.node);
    }
    return panel;
  }

  /** After a reload: each turn's net change from its tool calls' netChange (the last one per file holds it). */
  #restoreTurnChanges(records: readonly ConversationRecord[]): void {
    const byGeneration = new Map<string, Map<string, FileChange | null>>();
    for (const record of records) {
      if (record.type !== "tool_call" || !record.generationId || !record.netChange) continue;
      const files = byGeneration.get(record.generationId) ?? new Map<string, FileChange | null>();
      byGeneration.set(record.generationId, files);
      files.set(record.netChange.path, record.netChange.change);
    }
    for (const [generationId, files] of byGeneration) {
      const changes = [...files.values()].filter((c): c is FileChange => c !== null);
      if (changes.length === 0) continue;
      const panel = new TurnChanges(generationId);
      this.#turnChanges.set(generationId, panel);
      panel.set(changes);
      // After the turn's last record.
      const last = [...this.#log.querySelectorAll<HTMLElement>(`[data-generation-id="${CSS.escape(generationId)}"]`)].at(-1);
      if (last) last.after(panel.node);
      else this.#log.append(panel.node);
    }
  }

  #upsertRecord(record: ConversationRecord): void {
    if (record.type === "tool_call") {
      this.#upsertTool(record, record.status, { edited: record.edited, kind: record.kind, title: record.title, locations: record.locations, result: record.result, diff: record.diff, generationId: record.generationId, childConversationId: record.childConversationId });
      return;
    }
    const fresh =
      record.type === "compaction" ? compactionNode(record) : record.type === "reasoning" ? reasoningNode(record) : messageNode(record, this.hooks.rewind);
    const existing = this.#messages.get(record.id);
    if (existing) existing.replaceWith(fresh);
    else this.#insert(fresh, record.generationId);
    this.#messages.set(record.id, fresh);
  }

  /**
   * Before the live bubble, which stays last while a reply streams, and
   * before its turn's "Changes in this turn" panel, which ends the turn.
   */
  #insert(node: HTMLElement, generationId?: string): void {
    if (generationId) node.dataset.generationId = generationId;
    const panel = generationId ? this.#turnChanges.get(generationId)?.node : undefined;
    const anchor = this.#live?.node ?? (panel?.parentNode === this.#log ? panel : undefined);
    if (anchor) this.#log.insertBefore(node, anchor);
    else this.#log.append(node);
  }

  #upsertTool(
    call: ToolCall & { generationId?: string },
    status: ToolStatus,
    more: Partial<Pick<ToolCardData, "edited" | "result" | "diff" | "kind" | "title" | "locations" | "changes" | "rememberAs" | "childConversationId">> & { generationId?: string } = {},
  ): void {
    const { generationId, ...extra } = more;
    const data: ToolCardData = { toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments, status, ...extra };
    const existing = this.#tools.get(call.toolCallId);
    if (existing) {
      existing.update(data);
      return;
    }
    data.kind ??= this.hooks.toolKind(call.toolName);
    const card = new ToolCard(data, (decision) => this.hooks.decide(call.toolCallId, decision));
    this.#tools.set(call.toolCallId, card);
    this.#insert(card.node, generationId ?? call.generationId);
  }

  /**
   * The held messages now (state.queue, queue_changed): one pending bubble
   * each, in order; one the log already shows (taken meanwhile) is left out.
   */
  setHeld(messages: readonly QueuedMessage[]): void {
    const nodes = messages
      .filter((m) => !this.#messages.has(m.record.id))
      .map((m) => heldNode(m.record, m.delivery, () => this.hooks.removeHeld(m.record.id)));
    this.#held.replaceChildren(...nodes);
  }

  /** The append's answer said the message is held: shown at once (queue_changed redraws the same). */
  addHeld(record: MessageRecord, delivery: "steer" | "queue"): void {
    if (this.#messages.has(record.id) || this.#held.querySelector(`[data-record-id="${CSS.escape(record.id)}"]`)) return;
    this.#held.append(heldNode(record, delivery, () => this.hooks.removeHeld(record.id)));
  }

  #dropHeld(recordId: string): void {
    this.#held.querySelector(`[data-record-id="${CSS.escape(recordId)}"]`)?.remove();
  }

  #endCompacting(): void {
    this.#compacting?.remove();
    this.#compacting = undefined;
  }

  /** The tool call waiting longest for a decision (the keyboard shortcuts act on it). */
  firstPending(): ToolCard | undefined {
    for (const card of this.#tools.values()) if (card.node.dataset.status === "pending") return card;
    return undefined;
  }

  #progress(kind: "text" | "reasoning", delta: string, generationId: string): void {
    if (!this.#live) {
      const thinking = el("details", { class: "reasoning" }, el("summary", { text: "reasoning" }), el("div", { class: "reasoning-body" }));
      thinking.hidden = true;
      const body = el("div", { class: "content" });
      // aria-busy: the reply is read out once, as its stored message, not delta by delta.
      const node = el("div", { class: "message assistant streaming", attrs: { "aria-busy": "true" } }, el("div", { class: "role", text: "assistant" }), thinking, body);
      // Before its turn's changes panel (a later model call of a turn that already changed files).
      const panel = this.#turnChanges.get(generationId)?.node;
      if (panel?.parentNode === this.#log) this.#log.insertBefore(node, panel);
      else this.#log.append(node);
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
    this.#log.append(el("div", { class: "notice", text }));
  }
}

/** A held message: a pending bubble saying where it goes, with a button that takes it back (queue.remove). */
function heldNode(record: MessageRecord, delivery: "steer" | "queue", remove: () => void): HTMLElement {
  const label = delivery === "steer" ? "steering: joins the running turn at its next model call" : "queued: runs when this turn completes";
  return el(
    "div",
    { class: `message ${record.role} held`, attrs: { "data-record-id": record.id, "data-delivery": delivery } },
    iconButton("close", `Remove the waiting message “${record.content.slice(0, 40)}”`, remove, { class: "icon remove-held" }),
    el("div", { class: "role", text: `${record.role} · ${label}` }),
    el("div", { class: "content", text: record.content }),
  );
}

/** A compaction: what the model sees instead of everything above it, collapsed by default. */
function compactionNode(record: CompactionRecord): HTMLElement {
  const body = el("div", { class: "content" });
  body.innerHTML = renderMarkdown(record.summary);
  const figures = `${record.tokensBefore.toLocaleString("en")} → ${record.tokensAfter.toLocaleString("en")} tokens`;
  return el(
    "details",
    { class: "compaction", attrs: { "data-record-id": record.id, "data-trigger": record.trigger } },
    el("summary", { text: `Summary of earlier conversation (${figures})` }),
    ...(record.instructions ? [el("p", { class: "hint", text: `Instructions: ${record.instructions}` })] : []),
    body,
  );
}

/** The model's thinking for the reply after it (a reasoning record), folded like a message's own. */
function reasoningNode(record: Extract<ConversationRecord, { type: "reasoning" }>): HTMLElement {
  return el(
    "details",
    { class: "reasoning", attrs: { "data-record-id": record.id } },
    el("summary", { text: "reasoning" }),
    el("div", { class: "reasoning-body", text: record.content }),
  );
}

function messageNode(record: MessageRecord, rewind?: (recordId: string, anchor: HTMLElement) => void): HTMLElement {
  const body = el("div", { class: "content" });
  if (record.role === "assistant") body.innerHTML = renderMarkdown(record.content);
  else body.textContent = record.content;
  const node = el("div", { class: `message ${record.role}`, attrs: { "data-record-id": record.id } }, el("div", { class: "role", text: record.role }));
  if (record.reasoning) {
    node.append(el("details", { class: "reasoning" }, el("summary", { text: "reasoning" }), el("div", { class: "reasoning-body", text: record.reasoning })));
  }
  // A slash command's message: what was typed, as a small tag above the text it expanded to.
  if (record.command) {
    const typed = `/${record.command.name}${record.command.arguments ? ` ${record.command.arguments}` : ""}`;
    node.append(el("div", { class: "command-tag", text: typed, attrs: { title: `${record.command.source} command` } }));
  }
  node.append(body);
  if (record.role === "user" && rewind) {
    // An icon with a label (not text): the message's own text stays what it reads.
    // First, floated right: it sits on the role's line.
    node.prepend(iconButton("rewind", "Rewind to here", () => rewind(record.id, node), { class: "icon rewind" }));
  }
  return node;
}
