import { afterEach, describe, expect, it, vi } from "vitest";
import { eventTimestamp, notificationFrame, ProgressFrames } from "../../src/sessions/notification-frame.js";
import { ProgressEvent } from "../../src/sessions/progress-event.js";
import { gatedHandle, runtimeOn } from "../harness/gated-handle.js";

/** What publish() makes of a generation_progress event: the generic path ProgressFrames stands in for. */
function generic(conversationId: string, seq: number, timestamp: string, generationId: string, kind: "text" | "reasoning", delta: string): string {
  return notificationFrame("generation_progress", { conversationId, seq, timestamp, generationId, kind, delta });
}

describe("ProgressFrames", () => {
  const deltas = [
    "",
    "hello",
    ' "quoted" and \\backslash\\ ',
    "line\nbreak\ttab\r\u0000\u001f\u007f",
    "héllo wörld — ünïcödé",
    "emoji 🎉👩‍💻",
    "lone \ud800 high and \udfff low surrogate",
    "</script><!-- html -->",
    "\u2028\u2029",
    "x".repeat(70_000),
  ];
  const ids: Array<[string, string]> = [
    ["c_abc123", "g_def456"],
    ['odd"id\\', "gen\nid"],
  ];

  it("writes the bytes the generic notification frame has, for every kind of text", () => {
    let seq = 1;
    for (const [conversationId, generationId] of ids) {
      const frames = new ProgressFrames(conversationId);
      for (const kind of ["text", "reasoning"] as const) {
        for (const delta of deltas) {
          const timestamp = new Date(1_700_000_000_000 + seq).toISOString();
          const fast = frames.frame(seq, timestamp, generationId, kind, delta);
          expect(fast).toBe(generic(conversationId, seq, timestamp, generationId, kind, delta));
          expect(JSON.parse(fast)).toEqual({ jsonrpc: "2.0", method: "generation_progress", params: { conversationId, seq, timestamp, generationId, kind, delta } });
          seq += 977;
        }
      }
    }
  });

  it("keeps up with the generation and the kind changing from one frame to the next", () => {
    const frames = new ProgressFrames("c_one");
    const steps: Array<[string, "text" | "reasoning"]> = [
      ["g_1", "text"],
      ["g_1", "text"],
      ["g_1", "reasoning"],
      ["g_2", "reasoning"],
      ["g_2", "text"],
      ["g_1", "text"],
    ];
    steps.forEach(([generationId, kind], seq) => {
      const timestamp = new Date(1_700_000_000_000 + seq).toISOString();
      expect(frames.frame(seq, timestamp, generationId, kind, `d${seq}`)).toBe(generic("c_one", seq, timestamp, generationId, kind, `d${seq}`));
    });
  });
});

describe("the replay log's progress events", () => {
  afterEach(() => vi.restoreAllMocks());

  it("replay the very frames the live stream sent, joined again from their parts", async () => {
    const handle = gatedHandle();
    const live: string[] = [];
    const runtime = runtimeOn(handle, (frame) => live.push(frame));
    const again = vi.spyOn(ProgressFrames.prototype, "again");
    const steps: Array<[string, "text" | "reasoning", string]> = [
      ["g_1", "reasoning", "think"],
      ["g_1", "text", 'say "this"\n'],
      ["g_1", "text", "émoji 🎉"],
      ["g_2", "text", "\u2028 next"],
      ["g_2", "reasoning", ""],
    ];
    // Published before the first seq reservation is durable: held in the outbox, then sent.
    for (const [generationId, kind, delta] of steps) runtime.publishProgress(generationId, kind, delta);
    runtime.publish("generation_progress", { generationId: "g_2", kind: "text", delta: "generic" });
    handle.release();
    await runtime.delivered();
    expect(live).toHaveLength(steps.length + 1);
    expect(again).not.toHaveBeenCalled();

    // A replay in the middle of generation g_2, then its next token: the live frame is unchanged by the replay.
    const kept = runtime.events.since(0, runtime.state().seq)!;
    expect(kept.slice(0, steps.length).every((event) => event instanceof ProgressEvent)).toBe(true);
    expect(kept.map((event) => event.frame)).toEqual(live);
    // The kept events no longer hold their frames: each replayed one was joined again.
    expect(again).toHaveBeenCalledTimes(steps.length);
    runtime.publishProgress("g_2", "reasoning", "after the replay");
    const last = JSON.parse(live.at(-1)!).params;
    expect(live.at(-1)).toBe(notificationFrame("generation_progress", last));
    expect(last).toMatchObject({ generationId: "g_2", kind: "reasoning", delta: "after the replay" });
    expect(runtime.events.since(0, runtime.state().seq)!.map((event) => event.frame)).toEqual(live);
    // Each frame parses back to what was published.
    expect(live.slice(0, steps.length).map((frame) => JSON.parse(frame).params)).toEqual(
      steps.map(([generationId, kind, delta], i) => expect.objectContaining({ seq: i + 1, generationId, kind, delta })),
    );
  });
});

describe("eventTimestamp", () => {
  it("is toISOString of the millisecond asked, across repeats and changes", () => {
    const times = [0, 0, 1, 1, 1, 999, 1000, 1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_001, 5, Date.now()];
    for (const ms of times) expect(eventTimestamp(ms)).toBe(new Date(ms).toISOString());
  });
});
