/**
 * No event leaves before its seq is durable (issue: a seq could be reused
 * after kill -9, because an event went out before its reservation was on
 * disk). First the rule itself, with a store whose reservation writes the
 * test releases by hand; then the real thing: a server killed -9 the moment
 * its first event arrives, many times over.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { gatedHandle, runtimeOn } from "../harness/gated-handle.js";
import { openInitialized } from "../harness/test-server.js";

describe("events wait for their seq to be durable", () => {
  it("sends nothing until the first reservation is on disk, then everything in order", async () => {
    const handle = gatedHandle();
    const frames: string[] = [];
    const runtime = runtimeOn(handle, (f) => frames.push(f));
    for (let i = 0; i < 5; i++) runtime.publish("generation_progress", { generationId: "g", kind: "text", delta: `t${i}` });
    expect(frames).toEqual([]);
    expect(runtime.state().seq).toBe(0);
    handle.release();
    await runtime.delivered();
    expect(frames.map((f) => JSON.parse(f).params.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(handle.reservations[0]).toBeGreaterThanOrEqual(5);
  });

  it("holds events past the reservation while its renewal is being written, never sending a seq above what is durable", async () => {
    const handle = gatedHandle();
    const seqs: number[] = [];
    const runtime = runtimeOn(handle, (f) => seqs.push(JSON.parse(f).params.seq));
    runtime.publish("generation_progress", { generationId: "g", kind: "text", delta: "x" });
    handle.release();
    await runtime.delivered();
    const firstBlock = handle.seqReserved;
    // Publish well past the first block while no renewal is released.
    for (let i = 0; i < firstBlock + 500; i++) runtime.publish("generation_progress", { generationId: "g", kind: "text", delta: "y" });
    expect(Math.max(...seqs)).toBe(firstBlock);
    handle.release();
    await new Promise((r) => setTimeout(r, 10));
    handle.release();
    await runtime.delivered();
    expect(seqs).toEqual(Array.from({ length: firstBlock + 501 }, (_, i) => i + 1));
    expect(Math.max(...seqs)).toBeLessThanOrEqual(handle.seqReserved);
  });
});

describe("kill -9 at the first event", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await killAllCli();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("never hands out a seq twice across 8 crashes", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "agentwire-seq-"));
    dirs.push(dataDir);
    let conversationId: string | undefined;
    let lastSeq = 0;
    const seen: number[] = [];
    for (let round = 0; round < 8; round++) {
      const cli = runCli(["serve", "--port", "0", "--data-dir", dataDir, "--log-level", "silent"]);
      const url = await cli.listening();
      const raw = await openInitialized(url);
      let id = 1;
      const call = async (method: string, params: unknown) => {
        raw.send(JSON.stringify({ jsonrpc: "2.0", id: id++, method, params }));
        for (;;) {
          const frame: any = await raw.next(5000);
          if (frame.id !== undefined) return frame;
        }
      };
      if (!conversationId) conversationId = (await call("conversation.create", {})).result.id;
      await call("conversation.subscribe", { conversationId });
      raw.send(JSON.stringify({ jsonrpc: "2.0", id: id++, method: "message.append", params: { conversationId, role: "user", content: `round ${round}` } }));
      let event: any;
      do event = await raw.next(5000);
      while (event.method !== "message_added");
      cli.child.kill("SIGKILL"); // the moment the first event of this life arrives
      await cli.exited;
      raw.close();
      expect(event.params.seq).toBeGreaterThan(lastSeq);
      lastSeq = event.params.seq;
      seen.push(lastSeq);
    }
    expect(new Set(seen).size).toBe(seen.length);
  }, 60_000);
});
