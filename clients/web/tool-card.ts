/**
 * A tool call as a card: its title with its kind as a tag (read, edit,
 * execute…), the files it touches, arguments, live output, outcome, the
 * change a file tool is about to make (before approval: tool_pending's
 * `changes`, with a warning when the call would fail; a recomputed one from
 * tool_executing replaces it) and then the diff of the change it made, and —
 * while it waits for approval — confirm / edit /
 * skip (with an optional reason the model gets) / auto N / always allow
 * (when tool_pending offers `rememberAs`: the rule, in words, for this
 * conversation or the workspace) — Alt+Y and Alt+N confirm and skip the first waiting card. Edited arguments
 * are parsed and checked to be a JSON object before anything is sent, so a
 * typo is reported next to the editor instead of as a server error.
 */
import type { ToolCallRecord, ToolConfirmParams } from "../typescript/index.js";
import { renderChanges, renderDiff, type FileChange } from "./diff-view.js";
import { button, el } from "./dom.js";

export type ToolDecision = Omit<ToolConfirmParams, "conversationId" | "toolCallId">;
export type ToolStatus = ToolCallRecord["status"];

export interface ToolCardData {
  toolCallId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  status: ToolStatus;
  result?: string | null;
  edited?: boolean;
  /** The unified diff of the file it changed (write_file, edit_file). */
  diff?: string;
  /** What kind of thing the call does (read, edit, execute, …), from tool_pending / tool_executing or the tool's spec. */
  kind?: string;
  /** A human title ("Edit src/app.ts"); the tool name when the server gave none (a reloaded record). */
  title?: string;
  /** The workspace files the call touches. */
  locations?: ReadonlyArray<{ path: string; line?: number }>;
  /** What the call would change, before it runs (tool_pending, or tool_executing's recomputed one). */
  changes?: readonly FileChange[];
  /** The rule "Always allow" would store (tool_pending / state.pendingTools); absent when the call cannot be remembered. */
  rememberAs?: RememberAs;
  /** spawn_agent: the sub-agent's conversation (subagent_started, or the record once the call ran). */
  childConversationId?: string;
}

export interface RememberAs {
  tool: string;
  prefix?: string;
}

/** The rule in words: "`git status`-like commands" for a shell prefix, "`read_file` calls" otherwise. */
export function ruleInWords(rule: RememberAs, scope: "conversation" | "workspace"): string {
  const what = rule.prefix !== undefined ? `\`${rule.prefix}\`-like commands` : `\`${rule.tool}\` calls`;
  return `${what} in this ${scope}`;
}

/** The keys app.ts binds to the first waiting card's decisions (shown on the buttons). */
export const DECISION_KEYS = { confirm: "Alt+Y", skip: "Alt+N" } as const;

const OUTPUT_LIMIT = 64 * 1024; // characters kept on screen; the stored result is the reference

export class ToolCard {
  readonly node: HTMLElement;
  readonly #status = el("span", { class: "tool-status" });
  readonly #kind = el("span", { class: "tool-kind" });
  readonly #title = el("span", { class: "tool-title" });
  readonly #name = el("code", { class: "tool-name" });
  readonly #locations = el("ul", { class: "tool-locations", attrs: { "aria-label": "Files" } });
  readonly #args = el("pre", { class: "tool-args" });
  readonly #output = el("pre", { class: "tool-output" });
  readonly #diff = el("div", { class: "tool-diff" });
  /** spawn_agent: a link to the sub-agent's conversation (the app opens it on the hash change). */
  readonly #child = el("div", { class: "tool-child" });
  /** What the diff area shows now: the record's diff, or the proposed changes. */
  #shownDiff: string | readonly FileChange[] | undefined;
  readonly #actions = el("div", { class: "tool-actions" });
  readonly #error = el("div", { class: "tool-error", attrs: { role: "alert" } });
  #data: ToolCardData;
  #busy = false;
  #reason: HTMLInputElement | undefined;

  constructor(
    data: ToolCardData,
    private readonly decide: (decision: ToolDecision) => Promise<void>,
  ) {
    this.#data = data;
    this.node = el(
      "div",
      { class: "tool-card", attrs: { "data-tool-call-id": data.toolCallId } },
      el("div", { class: "tool-head" }, this.#kind, this.#title, this.#status),
      el("div", { class: "tool-meta" }, this.#name, this.#locations),
      this.#args,
      this.#child,
      this.#diff,
      this.#actions,
      this.#error,
      this.#output,
    );
    this.update(data);
  }

  /** New facts about the call; a field left undefined keeps what the card knew (a record carries no title or kind). */
  update(data: Partial<ToolCardData>): void {
    for (const [key, value] of Object.entries(data)) if (value !== undefined) (this.#data as unknown as Record<string, unknown>)[key] = value;
    const d = this.#data;
    this.node.dataset.status = d.status;
    this.#kind.textContent = d.kind ?? "tool";
    this.#kind.dataset.kind = d.kind ?? "other";
    this.#title.textContent = d.title || d.toolName;
    this.#name.textContent = d.toolName;
    this.#name.hidden = !d.title || d.title === d.toolName;
    this.#locations.replaceChildren(
      ...(d.locations ?? []).map((l) => el("li", { text: l.line ? `${l.path}:${l.line}` : l.path, attrs: { "data-path": l.path } })),
    );
    this.#status.textContent = d.edited ? `${d.status} (edited)` : d.status;
    this.#args.textContent = JSON.stringify(d.arguments, null, 2);
    if (d.childConversationId && this.#child.dataset.childConversationId !== d.childConversationId) {
      this.#child.dataset.childConversationId = d.childConversationId;
      this.#child.replaceChildren(
        el("a", {
          class: "child-link",
          text: "Open the sub-agent's conversation",
          attrs: { href: `#${encodeURIComponent(d.childConversationId)}`, "data-conversation-id": d.childConversationId },
        }),
        el("span", { class: "hint", text: " — watch it and confirm its tool calls there" }),
      );
    }
    this.#child.hidden = !d.childConversationId;
    if (d.result != null) this.#output.textContent = withoutDiff(d.result, d.diff).slice(0, OUTPUT_LIMIT);
    this.#output.hidden = !this.#output.textContent;
    // Once the tool ran, the diff it made; before, the change it would make.
    const proposed = d.status === "pending" || d.status === "executing" ? d.changes : undefined;
    const shown = d.diff ?? proposed;
    if (shown !== this.#shownDiff) {
      this.#shownDiff = shown;
      this.#diff.replaceChildren(
        ...(typeof shown === "string"
          ? [renderDiff(shown)]
          : shown
            ? [el("div", { class: "tool-diff-label", text: "Proposed change (nothing written yet)" }), renderChanges(shown)]
            : []),
      );
    }
    this.#diff.hidden = shown === undefined;
    this.#diff.dataset.shows = typeof shown === "string" ? "result" : "proposed";
    this.node.classList.toggle("will-fail", proposed?.some((c) => c.problem !== undefined) ?? false);
    if (d.status === "pending") {
      if (!this.#actions.hasChildNodes()) this.#renderActions();
    } else {
      this.#actions.replaceChildren();
      this.#error.textContent = "";
    }
  }

  /** A streamed chunk of output while the tool runs. */
  appendOutput(chunk: string): void {
    if (this.#output.textContent!.length < OUTPUT_LIMIT) this.#output.textContent += chunk;
    this.#output.hidden = false;
  }

  #renderActions(): void {
    const editor = el("textarea", { class: "tool-editor", attrs: { spellcheck: "false", "aria-label": "tool arguments (JSON)" } });
    editor.hidden = true;
    const runEdited = button("Run edited", () => {
      const parsed = parseArguments(editor.value);
      if (typeof parsed === "string") {
        this.#error.textContent = parsed;
        return;
      }
      void this.#send({ action: "edit", arguments: parsed });
    });
    runEdited.hidden = true;
    const reason = el("input", {
      class: "tool-skip-reason",
      attrs: { type: "text", maxlength: "4000", placeholder: "reason (optional)", "aria-label": "Reason for skipping (optional, the model gets it)" },
    });
    reason.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        this.#skip();
      }
    });
    this.#reason = reason;
    const count = el("input", { class: "tool-auto-count", attrs: { type: "number", min: "1", max: "1000", value: "5", "aria-label": "auto-approve count" } });
    this.#actions.replaceChildren(
      button("Confirm", () => void this.#send({ action: "confirm" }), {
        class: "primary",
        "aria-keyshortcuts": DECISION_KEYS.confirm,
        title: `Run it (${DECISION_KEYS.confirm})`,
      }),
      button("Edit", () => {
        editor.hidden = !editor.hidden;
        runEdited.hidden = editor.hidden;
        if (!editor.hidden) {
          editor.value = JSON.stringify(this.#data.arguments, null, 2);
          editor.focus();
        }
      }),
      el("span", { class: "tool-skip" },
        button("Skip", () => this.#skip(), { "aria-keyshortcuts": DECISION_KEYS.skip, title: `Do not run it (${DECISION_KEYS.skip}); the reason, if typed, tells the model why` }),
        reason,
      ),
      ...this.#rememberControls(),
      el("span", { class: "tool-auto" }, button("Auto", () => {
        const n = Number(count.value);
        if (!Number.isInteger(n) || n < 1) {
          this.#error.textContent = "auto needs a whole number of calls, at least 1";
          return;
        }
        void this.#send({ action: "auto", count: n });
      }, { title: "run this call and the next N without asking" }), count),
      el("span", { class: "tool-keys hint", attrs: { "aria-hidden": "true" } }, kbd(DECISION_KEYS.confirm), document.createTextNode(" confirm · "), kbd(DECISION_KEYS.skip), document.createTextNode(" skip")),
      editor,
      runEdited,
    );
  }

  /** "Always allow" and its scope, shown only when the server says the call can be remembered. */
  #rememberControls(): HTMLElement[] {
    const rule = this.#data.rememberAs;
    if (!rule) return [];
    const scope = el("select", { class: "tool-remember-scope", attrs: { "aria-label": "Always allow: which calls, where" } });
    for (const where of ["conversation", "workspace"] as const) {
      scope.append(el("option", { text: ruleInWords(rule, where), attrs: { value: where } }));
    }
    return [
      el("span", { class: "tool-remember" },
        button("Always allow", () => void this.#send({ action: "confirm", remember: scope.value as "conversation" | "workspace" }), {
          title: "Run it, and from now on run calls like it without asking",
        }),
        scope,
      ),
    ];
  }

  #skip(): void {
    const message = this.#reason?.value.trim();
    void this.#send(message ? { action: "skip", message } : { action: "skip" });
  }

  /** Decide from a keyboard shortcut; false when the card no longer waits. */
  decideByKey(action: "confirm" | "skip"): boolean {
    if (this.#data.status !== "pending") return false;
    if (action === "skip") this.#skip();
    else void this.#send({ action });
    return true;
  }

  async #send(decision: ToolDecision): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    this.#error.textContent = "";
    try {
      await this.decide(decision);
    } catch (error) {
      this.#error.textContent = error instanceof Error ? error.message : String(error);
    } finally {
      this.#busy = false;
    }
  }
}

/** A file tool's result repeats its diff for the model; the card shows the diff once, coloured. */
function withoutDiff(result: string, diff: string | undefined): string {
  const shared = diff?.trimEnd();
  return shared && result.includes(shared) ? result.replace(shared, "").trimEnd() : result;
}

const kbd = (keys: string) => el("kbd", { text: keys });

/** The edited arguments as an object, or a message saying what is wrong with the text. */
export function parseArguments(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "the arguments must be a JSON object ({ … })";
  return value as Record<string, unknown>;
}
