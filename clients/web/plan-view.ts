/**
 * The agent's plan (its update_plan calls: plan_updated, and state.plan after
 * a reload or a resync) as a checklist at the top of the conversation. A list
 * whose items say their state in words for screen readers ("completed",
 * "in progress", "pending") beside the mark the eye reads; the summary line,
 * "2 of 5 done", is announced when the plan changes.
 */
import type { PlanUpdatedNotification } from "../typescript/index.js";
import { el } from "./dom.js";

export type PlanEntries = PlanUpdatedNotification["entries"];

const STATES = {
  completed: { mark: "✓", words: "completed" },
  in_progress: { mark: "◐", words: "in progress" },
  pending: { mark: "○", words: "pending" },
} as const;

export class PlanView {
  readonly #count = el("span", { class: "plan-count", attrs: { "aria-live": "polite" } });
  readonly #list = el("ol", { class: "plan-list", attrs: { "aria-label": "Plan steps" } });
  readonly node = el(
    "details",
    { class: "plan", attrs: { "aria-label": "Plan" } },
    el("summary", {}, el("span", { class: "plan-title", text: "Plan" }), this.#count),
    this.#list,
  );

  constructor() {
    this.node.open = true;
    this.node.hidden = true;
  }

  /** The whole plan now (it replaces the previous one); null or empty hides it. */
  set(entries: PlanEntries | null): void {
    this.node.hidden = !entries?.length;
    if (!entries?.length) {
      this.#list.replaceChildren();
      this.#count.textContent = "";
      return;
    }
    const done = entries.filter((e) => e.status === "completed").length;
    this.#count.textContent = `${done} of ${entries.length} done`;
    this.#list.replaceChildren(
      ...entries.map((entry) => {
        const state = STATES[entry.status];
        return el(
          "li",
          { class: "plan-entry", attrs: { "data-status": entry.status } },
          el("span", { class: "plan-mark", text: state.mark, attrs: { "aria-hidden": "true" } }),
          el("span", { class: "sr-only", text: `${state.words}: ` }),
          el("span", { class: "plan-text", text: entry.content }),
          ...(entry.priority === "high" ? [el("span", { class: "plan-priority", text: "high" })] : []),
        );
      }),
    );
  }
}
