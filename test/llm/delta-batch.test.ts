import { describe, expect, it } from "vitest";
import { DeltaBatch } from "../../src/llm/wires/wire.js";

describe("DeltaBatch", () => {
  it("merges consecutive deltas of one kind, in order, and skips empty ones", () => {
    const batch = new DeltaBatch();
    expect(batch.empty).toBe(true);
    batch.add("text", "a");
    batch.add("text", "");
    batch.add("text", "b");
    expect(batch.empty).toBe(false);
    batch.add("reasoning", "r");
    batch.add("text", "c");
    expect(batch.take()).toEqual([
      { type: "text", delta: "ab" },
      { type: "reasoning", delta: "r" },
      { type: "text", delta: "c" },
    ]);
  });

  it("is empty after take or drain, and fills again from nothing (a model call reuses its batches)", () => {
    const batch = new DeltaBatch();
    batch.add("text", "one");
    batch.add("reasoning", "two");
    const seen: Array<[string, string]> = [];
    batch.drain((kind, delta) => seen.push([kind, delta]));
    expect(seen).toEqual([
      ["text", "one"],
      ["reasoning", "two"],
    ]);
    expect(batch.empty).toBe(true);
    expect(batch.take()).toEqual([]);
    // The next read starts a new event even when its kind is the last one's.
    batch.add("reasoning", "three");
    batch.add("reasoning", "four");
    expect(batch.take()).toEqual([{ type: "reasoning", delta: "threefour" }]);
    batch.add("text", "five");
    seen.length = 0;
    batch.drain((kind, delta) => seen.push([kind, delta]));
    expect(seen).toEqual([["text", "five"]]);
  });
});
