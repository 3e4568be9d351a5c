/**
 * How the web client's top bar writes token counts and costs
 * (clients/web/usage-meter.ts): exact below ten thousand, compact above; a
 * cost with enough decimals that a cheap turn is not shown as $0.00, and a
 * currency Intl does not know written as the configuration names it.
 * Pure functions: no browser needed.
 */
import { describe, expect, it } from "vitest";
import { formatCost, formatTokens } from "../../clients/web/usage-meter.js";

describe("the web client's usage formats", () => {
  it("writes token counts exactly below ten thousand and compactly above", () => {
    expect(formatTokens(0)).toBe("0");
    expect(formatTokens(9_999)).toBe("9,999");
    expect(formatTokens(12_345)).toBe("12.3K");
    expect(formatTokens(128_000)).toBe("128K");
    expect(formatTokens(1_047_576)).toBe("1M");
  });

  it("writes costs in their currency, with four decimals below one unit", () => {
    expect(formatCost({ amount: 0.02676, currency: "USD" })).toBe("$0.0268");
    expect(formatCost({ amount: 0.5, currency: "USD" })).toBe("$0.50");
    expect(formatCost({ amount: 12.345, currency: "EUR" })).toBe("€12.35");
    expect(formatCost({ amount: 0, currency: "USD" })).toBe("$0.00");
    // The configuration may name any currency (up to 16 characters); one Intl rejects is written as given.
    expect(formatCost({ amount: 0.0019, currency: "credits" })).toBe("0.0019 credits");
  });
});
