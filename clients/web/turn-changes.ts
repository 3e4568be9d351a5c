/**
 * "Changes in this turn": the net change of one generation's files
 * (generation_diff_updated; rebuilt after a reload from the tool call
 * records' netChange), as a collapsed panel after the turn's messages and
 * tool cards. Its summary counts the files and lines; opened, each file's
 * diff against its content before the turn.
 */
import { changeStats, renderChanges, type FileChange } from "./diff-view.js";
import { el } from "./dom.js";

export class TurnChanges {
  readonly #summary = el("span", { class: "turn-changes-stats" });
  readonly #body = el("div", { class: "turn-changes-body" });
  readonly node: HTMLDetailsElement;

  constructor(generationId: string) {
    this.node = el(
      "details",
      { class: "turn-changes", attrs: { "data-generation-id": generationId } },
      el("summary", {}, el("span", { class: "turn-changes-title", text: "Changes in this turn" }), this.#summary),
      this.#body,
    );
  }

  /** The generation's whole net change now (it replaces the previous one); empty hides the panel. */
  set(changes: readonly FileChange[]): void {
    this.node.hidden = changes.length === 0;
    const { added, removed } = changeStats(changes);
    this.#summary.textContent = `${changes.length} file${changes.length === 1 ? "" : "s"}, +${added} −${removed}`;
    this.#body.replaceChildren(renderChanges(changes));
  }
}
