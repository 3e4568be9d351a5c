/**
 * A tool call as a card: name, arguments, live output, outcome, the diff of
 * a file it changed, and — while it waits for approval — confirm / edit /
 * skip / auto N (Alt+Y and Alt+N confirm and skip the first waiting card). Edited arguments
 * are parsed and checked to be a JSON object before anything is sent, so a
 * typo is reported next to the editor instead of as a server error.
 */
import type { ToolCallRecord, ToolConfirmParams } from "../typescript/index.js";
import { renderDiff } from "./diff-view.js";
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
}

/** The keys app.ts binds to the first waiting card's decisions (shown on the buttons). */
export const DECISION_KEYS = { confirm: "Alt+Y", skip: "Alt+N" } as const;

const OUTPUT_LIMIT = 64 * 1024; // characters kept on screen; the stored result is the reference

export class ToolCard {
  readonly node: HTMLElement;
  readonly #status = el("span", { class: "tool-status" });
  readonly #args = el("pre", { class: "tool-args" });
  readonly #output = el("pre", { class: "tool-output" });
  readonly #diff = el("div", { class: "tool-diff" });
  #shownDiff: string | undefined;
  readonly #actions = el("div", { class: "tool-actions" });
  readonly #error = el("div", { class: "tool-error", attrs: { role: "alert" } });
  #data: ToolCardData;
  #busy = false;

  constructor(
    data: ToolCardData,
    private readonly decide: (decision: ToolDecision) => Promise<void>,
  ) {
    this.#data = data;
    this.node = el(
      "div",
      { class: "tool-card", attrs: { "data-tool-call-id": data.toolCallId } },
      el("div", { class: "tool-head" }, el("span", { class: "tool-name", text: data.toolName }), this.#status),
      this.#args,
      this.#actions,
      this.#error,
      this.#diff,
      this.#output,
    );
    this.update(data);
  }

  update(data: Partial<ToolCardData>): void {
    this.#data = { ...this.#data, ...data };
    const d = this.#data;
    this.node.dataset.status = d.status;
    this.#status.textContent = d.edited ? `${d.status} (edited)` : d.status;
    this.#args.textContent = JSON.stringify(d.arguments, null, 2);
    if (d.result != null) this.#output.textContent = withoutDiff(d.result, d.diff).slice(0, OUTPUT_LIMIT);
    this.#output.hidden = !this.#output.textContent;
    if (d.diff !== this.#shownDiff) {
      this.#shownDiff = d.diff;
      this.#diff.replaceChildren(...(d.diff ? [renderDiff(d.diff)] : []));
    }
    this.#diff.hidden = !d.diff;
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
      button("Skip", () => void this.#send({ action: "skip" }), { "aria-keyshortcuts": DECISION_KEYS.skip, title: `Do not run it (${DECISION_KEYS.skip})` }),
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

  /** Decide from a keyboard shortcut; false when the card no longer waits. */
  decideByKey(action: "confirm" | "skip"): boolean {
    if (this.#data.status !== "pending") return false;
    void this.#send({ action });
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
