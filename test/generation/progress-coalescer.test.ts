import { afterEach, describe, expect, it, vi } from "vitest";
import { ProgressCoalescer } from "../../src/generation/progress-coalescer.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("ProgressCoalescer", () => {
  afterEach(() => vi.restoreAllMocks());

  it("sends a tick's first delta at once and merges the rest of the tick into one frame after it", async () => {
    const sent: string[] = [];
    const coalescer = new ProgressCoalescer((kind, delta) => sent.push(`${kind}:${delta}`));
    coalescer.add("text", "a");
    coalescer.add("text", "b");
    coalescer.add("reasoning", "c");
    coalescer.add("reasoning", "d");
    expect(sent).toEqual(["text:a", "text:b"]);
    await nextTurn();
    expect(sent).toEqual(["text:a", "text:b", "reasoning:cd"]);
    coalescer.add("text", "e");
    expect(sent.at(-1)).toBe("text:e");
    await nextTurn();
  });

  it("ends the tick of every stream with one immediate, not one per stream", async () => {
    const immediates = vi.spyOn(globalThis, "setImmediate");
    const sent: string[] = [];
    const streams = ["x", "y", "z"].map((name) => new ProgressCoalescer((_, delta) => sent.push(`${name}:${delta}`)));
    for (const stream of streams) stream.add("text", "1");
    for (const stream of streams) stream.add("text", "2");
    expect(immediates).toHaveBeenCalledTimes(1);
    immediates.mockRestore();
    await nextTurn();
    expect(sent).toEqual(["x:1", "y:1", "z:1", "x:2", "y:2", "z:2"]);
    // A new tick: each stream's first delta leaves at once again.
    for (const stream of streams) stream.add("text", "3");
    expect(sent.slice(-3)).toEqual(["x:3", "y:3", "z:3"]);
    await nextTurn();
  });

  it("releases every stream even when one stream's send throws, and throws that error after", () => {
    let endOfTick: (() => void) | undefined;
    vi.spyOn(globalThis, "setImmediate").mockImplementation(((callback: () => void) => {
      endOfTick = callback;
    }) as never);
    const sent: string[] = [];
    let failing = false;
    const bad = new ProgressCoalescer(() => {
      if (failing) throw new Error("send failed");
    });
    const good = new ProgressCoalescer((_, delta) => sent.push(delta));
    bad.add("text", "1");
    good.add("text", "1");
    bad.add("text", "2");
    good.add("text", "2");
    failing = true;
    expect(endOfTick).toBeDefined();
    expect(() => endOfTick!()).toThrow("send failed");
    expect(sent).toEqual(["1", "2"]);
    good.add("text", "3");
    expect(sent).toEqual(["1", "2", "3"]);
    endOfTick!(); // the shared list is left empty for the files that share this worker
  });
});
