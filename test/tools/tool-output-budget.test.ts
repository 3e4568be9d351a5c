/**
 * The output budgets on their own (src/tools/output-budget.ts): what the
 * model reads (head and tail with an exact cut marker) and what clients are
 * streamed (up to a budget, then one notice). Multi-byte characters are
 * never split by either.
 */
import { describe, expect, it } from "vitest";
import { OutputBudget, StreamBudget, utf8Prefix } from "../../src/tools/output-budget.js";

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

function kept(maxBytes: number, ...chunks: string[]): string {
  const budget = new OutputBudget(maxBytes);
  for (const chunk of chunks) budget.append(chunk);
  return budget.toString();
}

describe("OutputBudget", () => {
  it("keeps everything that fits, across chunks, without a marker", () => {
    expect(kept(10, "abc", "defg", "hij")).toBe("abcdefghij");
    expect(kept(10)).toBe("");
  });

  it("keeps the first and last halves and counts the cut bytes exactly", () => {
    const text = "0123456789".repeat(10); // 100 bytes
    expect(kept(20, text)).toBe(`0123456789\n[… 80 bytes cut …]\n0123456789`);
    // The same text in odd-sized chunks gives the same result.
    const pieces = text.match(/.{1,7}/g)!;
    expect(kept(20, ...pieces)).toBe(`0123456789\n[… 80 bytes cut …]\n0123456789`);
  });

  it("gives the odd byte to the tail and counts appended bytes", () => {
    const budget = new OutputBudget(5);
    budget.append("abcdefghij");
    expect(budget.toString()).toBe("ab\n[… 5 bytes cut …]\nhij");
    expect(budget.totalBytes).toBe(10);
  });

  it("never splits a multi-byte character at either cut, and counts the partial ones as cut", () => {
    // "é" is 2 bytes: a head of 5 bytes holds 2 of them, a tail of 6 holds 3.
    expect(kept(11, "é".repeat(100))).toBe("éé\n[… 190 bytes cut …]\nééé");
    // "😀" is 4 bytes: a head of 3 bytes holds none; the tail of 3 bytes holds none either.
    const out = kept(6, "😀".repeat(10));
    expect(out).toBe("\n[… 40 bytes cut …]\n");
    // Mixed widths, appended one character at a time.
    const text = "aé😀€".repeat(50); // 1 + 2 + 4 + 3 = 10 bytes per group
    const result = kept(64, ...Array.from(text));
    const [head, tail] = result.split(/\n\[… \d+ bytes cut …\]\n/);
    expect(text.startsWith(head!)).toBe(true);
    expect(text.endsWith(tail!)).toBe(true);
    expect(result).not.toContain("\uFFFD");
    const cut = Number(/\[… (\d+) bytes cut …\]/.exec(result)![1]);
    expect(bytes(head!) + cut + bytes(tail!)).toBe(bytes(text));
    expect(bytes(head!) + bytes(tail!)).toBeLessThanOrEqual(64);
  });
});

describe("StreamBudget", () => {
  function collect(maxBytes: number, notice?: string) {
    const chunks: Array<[string, string]> = [];
    const budget = new StreamBudget(maxBytes, (kind, text) => chunks.push([kind, text]), notice);
    return { budget, chunks };
  }

  it("passes chunks through, in order and on their stream, while within the budget", () => {
    const { budget, chunks } = collect(10);
    budget.send("stdout", "abc");
    budget.send("stderr", "defg");
    expect(chunks).toEqual([
      ["stdout", "abc"],
      ["stderr", "defg"],
    ]);
    expect(budget.closed).toBe(false);
  });

  it("sends what fits of the crossing chunk, then the notice once, then nothing", () => {
    const { budget, chunks } = collect(5);
    budget.send("stdout", "abc");
    budget.send("stderr", "defgh");
    budget.send("stdout", "more");
    budget.send("stderr", "and more");
    expect(chunks).toEqual([
      ["stdout", "abc"],
      ["stderr", "de"],
      ["stderr", "\n[output beyond 5 bytes is not streamed]\n"],
    ]);
    expect(budget.closed).toBe(true);
  });

  it("takes a custom notice and never splits a character at the budget", () => {
    const { budget, chunks } = collect(5, "[stop]");
    budget.send("stdout", "éééé"); // 8 bytes: two whole characters fit
    expect(chunks).toEqual([
      ["stdout", "éé"],
      ["stdout", "[stop]"],
    ]);
  });

  it("survives a sink that throws", () => {
    const budget = new StreamBudget(100, () => {
      throw new Error("listener broke");
    });
    expect(() => budget.send("stdout", "x")).not.toThrow();
  });
});

describe("utf8Prefix", () => {
  it("ends on a character boundary at or below the limit", () => {
    const text = Buffer.from("aé😀", "utf8"); // 1 + 2 + 4 bytes
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8].map((limit) => utf8Prefix(text, limit))).toEqual([
      "",
      "a",
      "a",
      "aé",
      "aé",
      "aé",
      "aé",
      "aé😀",
      "aé😀",
    ]);
    expect(utf8Prefix(text, -1)).toBe("");
  });
});
