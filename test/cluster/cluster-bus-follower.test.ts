/**
 * The ordering of one bus subscription (BusFollower), driven by hand: the
 * replay is a promise the test resolves when it chooses, so the races the
 * Redis tests hit by chance are played here on purpose — live events during
 * a replay, a gap among them, a failed replay, a close mid-replay.
 */
import { describe, expect, it } from "vitest";
import { BusFollower } from "../../src/cluster/bus-follower.js";
import type { BusEvent, ReplayOutcome } from "../../src/cluster/event-bus.js";
import type { LoggedEvent } from "../../src/sessions/event-log.js";
import { eventually } from "../harness/eventually.js";

const ev = (seq: number, prevSeq = seq - 1): BusEvent => ({ seq, prevSeq, method: "m", frame: `f${seq}` });
const logged = (seq: number): LoggedEvent => ({ seq, method: "m", frame: `f${seq}` });
const ok = (seqs: number[], latestSeq: number): ReplayOutcome => ({ resync: false, events: seqs.map(logged), latestSeq });

/** A follower whose replays wait until the test answers them, in order. */
function follower(afterSeq: number | undefined) {
  const seqs: number[] = [];
  const resyncs: number[] = [];
  const errors: string[] = [];
  const replays: { from: number; answer: (o: ReplayOutcome) => void; fail: (e: Error) => void }[] = [];
  const f = new BusFollower(
    afterSeq,
    { onEvent: (e) => seqs.push(e.seq), onResync: (latest) => resyncs.push(latest) },
    (from) => new Promise((answer, fail) => replays.push({ from, answer, fail })),
    (error, during) => errors.push(`${during}: ${(error as Error).message}`),
  );
  const nextReplay = async () => {
    await eventually(() => replays.length > 0, 2000, "a replay");
    return replays.shift()!;
  };
  return { f, seqs, resyncs, errors, replays, nextReplay };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("the order of one bus subscription", () => {
  it("holds live events during the start replay and delivers them after it, without the overlap", async () => {
    const t = follower(2);
    t.f.live(ev(3)); // before the channel is even confirmed
    t.f.resume();
    const replay = await t.nextReplay();
    expect(replay.from).toBe(2);
    t.f.live(ev(4));
    t.f.live(ev(5));
    replay.answer(ok([3, 4], 4));
    expect(await t.f.ready).toEqual({ replayed: 2, resync: false });
    t.f.live(ev(6));
    expect(t.seqs).toEqual([3, 4, 5, 6]);
  });

  it("without a start point, goes live after the latest seq and replays nothing", async () => {
    const t = follower(undefined);
    t.f.resume();
    const replay = await t.nextReplay();
    expect(replay.from).toBe(Number.MAX_SAFE_INTEGER);
    t.f.live(ev(10));
    t.f.live(ev(11));
    replay.answer(ok([], 10));
    expect(await t.f.ready).toEqual({ replayed: 0, resync: false });
    expect(t.seqs).toEqual([11]);
  });

  it("a live event that does not follow what was delivered triggers a replay from the last seq; a hole the stream no longer holds is resync", async () => {
    const t = follower(0);
    t.f.resume();
    (await t.nextReplay()).answer(ok([], 0));
    await t.f.ready;
    t.f.live(ev(1));
    t.f.live(ev(3)); // 2 was lost
    t.f.live(ev(4)); // held behind the repair
    const repair = await t.nextReplay();
    expect(repair.from).toBe(1);
    repair.answer(ok([2, 3, 4], 4));
    await tick();
    expect(t.seqs).toEqual([1, 2, 3, 4]);

    t.f.live(ev(7, 6));
    const second = await t.nextReplay();
    expect(second.from).toBe(4);
    second.answer({ resync: true, latestSeq: 7 });
    await tick();
    expect(t.resyncs).toEqual([7]);
    t.f.live(ev(8));
    expect(t.seqs).toEqual([1, 2, 3, 4, 8]);
  });

  it("a failed replay is reported and tried again; live events wait for it", async () => {
    const t = follower(0);
    t.f.resume();
    (await t.nextReplay()).fail(new Error("Connection is closed."));
    t.f.live(ev(1));
    const retry = await t.nextReplay(); // after the retry delay
    expect(retry.from).toBe(0);
    expect(t.errors).toEqual(["replay: Connection is closed."]);
    expect(t.seqs).toEqual([]);
    retry.answer(ok([1], 1));
    await t.f.ready;
    expect(t.seqs).toEqual([1]);
  });

  it("a resume during a replay (a reconnection) replays again after it", async () => {
    const t = follower(0);
    t.f.resume();
    const first = await t.nextReplay();
    t.f.resume();
    first.answer(ok([1], 1));
    const again = await t.nextReplay();
    expect(again.from).toBe(1);
    again.answer(ok([2], 2));
    await tick();
    expect(t.seqs).toEqual([1, 2]);
  });

  it("closed mid-replay: ready resolves, nothing is delivered, no retry stays scheduled", async () => {
    const t = follower(0);
    t.f.resume();
    const replay = await t.nextReplay();
    t.f.close();
    expect(await t.f.ready).toEqual({ replayed: 0, resync: false });
    replay.answer(ok([1, 2], 2));
    t.f.live(ev(3));
    await tick();
    expect(t.seqs).toEqual([]);

    const u = follower(0);
    u.f.resume();
    (await u.nextReplay()).fail(new Error("down"));
    u.f.close();
    await new Promise((r) => setTimeout(r, 700));
    expect(u.replays).toEqual([]); // the retry timer was cleared
  });
});
