import { describe, expect, it } from "vitest";
import { eventTimestamp, notificationFrame, ProgressFrames } from "../../src/sessions/notification-frame.js";

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

describe("eventTimestamp", () => {
  it("is toISOString of the millisecond asked, across repeats and changes", () => {
    const times = [0, 0, 1, 1, 1, 999, 1000, 1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_001, 5, Date.now()];
    for (const ms of times) expect(eventTimestamp(ms)).toBe(new Date(ms).toISOString());
  });
});
