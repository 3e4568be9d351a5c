/**
 * The context meter and the cost, in the top bar: how much of the model's
 * context window the conversation fills (usedTokens / windowTokens, as a
 * <meter> with its percentage; only the token count when the window is not
 * declared) and what this turn and the whole conversation cost.
 *
 * A cost is shown only when the server reports one (the model's pricing is
 * configured); nothing here estimates a price. Costs that leave out unpriced
 * calls say so ("≥").
 */
import type { Cost, UsageTotals } from "../typescript/index.js";
import { el } from "./dom.js";

export interface UsageState {
  usedTokens: number;
  /** The model's declared context window; null when unknown. */
  windowTokens: number | null;
  /** This turn's (generation's) totals; null before a turn ran since the page opened the conversation. */
  turn: Pick<UsageTotals, "cost" | "unpricedModelCalls"> | null;
  /** The conversation's totals. */
  conversation: Pick<UsageTotals, "cost" | "unpricedModelCalls"> | null;
}

/** At this share of the window the meter turns to its warning colour (the server's context_nearly_full threshold). */
const HIGH = 0.8;

export class UsageMeter {
  readonly #meter = el("meter", { attrs: { min: "0", "aria-label": "Context window used" } });
  readonly #context = el("span", { class: "usage-context" });
  readonly #cost = el("span", { class: "usage-cost" });

  constructor(readonly node: HTMLElement) {
    node.replaceChildren(this.#meter, this.#context, this.#cost);
    node.hidden = true;
  }

  /** Nothing to show (no conversation open, or it has not called a model yet). */
  clear(): void {
    this.node.hidden = true;
  }

  show(state: UsageState): void {
    this.node.hidden = false;
    const { usedTokens, windowTokens } = state;
    if (windowTokens) {
      const share = usedTokens / windowTokens;
      this.#meter.hidden = false;
      this.#meter.max = windowTokens;
      this.#meter.value = Math.min(usedTokens, windowTokens);
      this.#meter.high = Math.round(windowTokens * HIGH);
      this.#meter.low = Math.round(windowTokens * 0.5);
      this.#meter.optimum = 0;
      const percent = `${Math.round(share * 100)} %`;
      this.#context.textContent = `${formatTokens(usedTokens)} / ${formatTokens(windowTokens)} tokens (${percent})`;
      this.#context.title = `${usedTokens.toLocaleString("en")} of the model's ${windowTokens.toLocaleString("en")}-token context window used`;
      this.#meter.setAttribute("aria-valuetext", `${percent} of the context window (${usedTokens.toLocaleString("en")} of ${windowTokens.toLocaleString("en")} tokens)`);
      this.node.dataset.level = share >= HIGH ? "high" : "normal";
    } else {
      this.#meter.hidden = true;
      this.#context.textContent = `${formatTokens(usedTokens)} tokens`;
      this.#context.title = `${usedTokens.toLocaleString("en")} tokens in the context (the model's context window is not declared)`;
      this.node.dataset.level = "normal";
    }
    const parts: string[] = [];
    const titles: string[] = [];
    for (const [label, totals] of [
      ["turn", state.turn],
      ["total", state.conversation],
    ] as const) {
      if (!totals?.cost) continue;
      const partial = totals.unpricedModelCalls > 0;
      parts.push(`${label} ${partial ? "≥ " : ""}${formatCost(totals.cost)}`);
      if (partial) titles.push(`${label}: ${totals.unpricedModelCalls} model call(s) without a known price are not counted`);
    }
    this.#cost.hidden = parts.length === 0;
    this.#cost.textContent = parts.join(" · ");
    this.#cost.title = titles.join("; ") || "cost from the model's configured pricing";
  }
}

/** 1,234 below ten thousand; 12.3K, 1.2M above (the exact count is in the title). */
export function formatTokens(n: number): string {
  if (n < 10_000) return n.toLocaleString("en");
  return new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 }).format(n);
}

/** $0.0049 (four decimals below one unit, so a cheap turn is not shown as $0.00); "0.0049 XYZ" for a currency Intl does not know. */
export function formatCost(cost: Cost): string {
  const digits = cost.amount < 1 ? 4 : 2;
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency: cost.currency, minimumFractionDigits: 2, maximumFractionDigits: digits }).format(cost.amount);
  } catch {
    return `${cost.amount.toFixed(digits)} ${cost.currency}`;
  }
}
