/**
 * Turn burst: the fixed cost of a turn when many run at once. N
 * conversations, each turn a user message (not timed) and then a step with a
 * one-token model, all steps sent together. Per round of N turns: the
 * server's CPU (utime + stime from /proc) divided by N, and the time from the
 * first step sent to the last generation_complete. What a turn costs beside
 * its tokens — the step, the generation's start, the model request, the
 * stored reply, usage and run state, the events — at the load where those
 * costs pile up (issue 27's "per-turn fixed cost"). No floor: a relay has no
 * turns.
 */
import { closeAll, connectMany, USER_TEXT, watchGeneration } from "../client.js";
import { cpuMs, startFake, startServer } from "../processes.js";
import { summarize } from "../stats.js";
import type { Scenario } from "./scenario.js";

const MODEL = "bench-paced-1-10";
const TIMEOUT_MS = 60_000;

export const turnBurst: Scenario = {
  name: "turn burst",
  rows: ["turns.cpu", "turns.wall"],
  describe: (cfg) =>
    `${cfg.turnBurstConversations} conversations, a message then a step with a one-token model each, all steps sent together; ` +
    `${cfg.launches} launch${cfg.launches === 1 ? "" : "es"} × (1 warm-up + ${cfg.turnBurstRounds} rounds)`,
  async run({ cfg, log }) {
    const fake = await startFake();
    const cpu: number[][] = [];
    const wall: number[][] = [];
    try {
      for (let launch = 0; launch < cfg.launches; launch++) {
        const server = await startServer(fake.url);
        let clients: Awaited<ReturnType<typeof connectMany>> = [];
        try {
          clients = await connectMany(server.url, cfg.turnBurstConversations, 50);
          const ids: string[] = [];
          for (const client of clients) {
            const { id } = await client.conversation.create({ title: "turn burst" });
            await client.conversation.subscribe({ conversationId: id });
            ids.push(id);
          }
          const perTurn: number[] = [];
          const ended: number[] = [];
          for (let round = 0; round < 1 + cfg.turnBurstRounds; round++) {
            await Promise.all(clients.map((c, i) => c.message.append({ conversationId: ids[i], role: "user", content: USER_TEXT })));
            const watches = clients.map((c, i) => watchGeneration(c, ids[i], TIMEOUT_MS));
            const before = cpuMs(server.pid);
            const t0 = performance.now();
            await Promise.all(clients.map((c, i) => c.step({ conversationId: ids[i], model: MODEL })));
            await Promise.all(watches.map((w) => w.done));
            const ms = performance.now() - t0;
            // The turns' last writes land just after their generation_complete: give them a moment before reading the CPU.
            await new Promise((resolve) => setTimeout(resolve, 200));
            if (round === 0) continue;
            perTurn.push((cpuMs(server.pid) - before) / clients.length);
            ended.push(ms);
          }
          cpu.push(perTurn);
          wall.push(ended);
          log(`turn burst launch ${launch + 1}: CPU per turn ${perTurn.map((v) => v.toFixed(2)).join(" / ")} ms; all ended after ${ended.map((v) => v.toFixed(0)).join(" / ")} ms`);
        } finally {
          await closeAll(clients);
          await server.close();
        }
      }
    } finally {
      await fake.stop();
    }
    return {
      "turns.cpu": { ...summarize(cpu), note: "server utime + stime over a round (/proc, 10 ms ticks), ÷ the round's turns" },
      "turns.wall": { ...summarize(wall), note: "first step sent → last generation_complete" },
    };
  },
};
