/**
 * Tool round trip: the fake's `bench-tool-true` model proposes one shell
 * call `{"command":"true"}`, then answers the tool result with a few
 * tokens. From the moment the driver sends tool.confirm: its answer, the
 * tool_completed notification, and the first token of the next model call.
 * Floor of "done": the driver spawning `bash -c true` itself.
 */
import { connect, newConversation, nextNotification, watchGeneration } from "../client.js";
import { floorShellTrue } from "../floor.js";
import { startFake, startServer } from "../processes.js";
import { nsToMs, summarize } from "../stats.js";
import { launchesText, turns, type Scenario } from "./scenario.js";

export const toolRoundTrip: Scenario = {
  name: "tool round trip",
  rows: ["tool.ack", "tool.done", "tool.next"],
  describe: (cfg) => `shell \`true\` via bench-tool-true, fresh conversation per turn; ${launchesText(cfg)}`,
  async run({ cfg, log }) {
    const fake = await startFake();
    const ack: number[][] = [];
    const done: number[][] = [];
    let executingFirst = 0;
    let total = 0;
    const next: number[][] = [];
    const floorDone: number[][] = [];
    const floorAck: number[][] = [];
    try {
      for (let launch = 0; launch < cfg.launches; launch++) {
        const server = await startServer(fake.url);
        try {
          const client = await connect(server.url);
          floorDone.push(await turns(cfg, () => floorShellTrue()));
          // Floor of "ack": a trivial request's round trip on the same connection.
          const idle = await newConversation(client);
          floorAck.push(
            await turns(cfg, async () => {
              const t0 = process.hrtime.bigint();
              await client.interrupt({ conversationId: idle });
              return nsToMs(process.hrtime.bigint() - t0);
            }),
          );
          const measured = await turns(cfg, async () => {
            const conversationId = await newConversation(client);
            let approvedNs: bigint | undefined;
            let nextNs: bigint | undefined;
            const watch = watchGeneration(client, conversationId, 60_000, (now) => {
              if (approvedNs !== undefined && nextNs === undefined) nextNs = now;
            });
            const pending = nextNotification(client, "tool_pending", conversationId, 30_000);
            await client.step({ conversationId, model: "bench-tool-true" });
            const offered = (await pending).params;
            const completed = nextNotification(client, "tool_completed", conversationId, 30_000);
            const executing = nextNotification(client, "tool_executing", conversationId, 30_000);
            approvedNs = process.hrtime.bigint();
            await client.tool.confirm({ conversationId, toolCallId: offered.toolCallId, action: "confirm" });
            const ackNs = process.hrtime.bigint();
            const completedAt = (await completed).atNs;
            const executingAt = (await executing).atNs;
            await watch.done;
            if (nextNs === undefined) throw new Error("no token after the tool result");
            return {
              ack: nsToMs(ackNs - approvedNs),
              executing: nsToMs(executingAt - approvedNs),
              done: nsToMs(completedAt - approvedNs),
              next: nsToMs(nextNs - approvedNs),
            };
          });
          ack.push(measured.map((r) => r.ack));
          total += measured.length;
          executingFirst += measured.filter((r) => r.executing < r.ack).length;
          done.push(measured.map((r) => r.done));
          next.push(measured.map((r) => r.next));
          log(
            `tool launch ${launch + 1}: ` +
              measured.map((r) => `ack ${r.ack.toFixed(2)} executing ${r.executing.toFixed(2)} done ${r.done.toFixed(2)} next ${r.next.toFixed(2)} ms`).join("; "),
          );
          await client.close();
        } finally {
          await server.close();
        }
      }
    } finally {
      await fake.stop();
    }
    const f = summarize(floorDone);
    const fa = summarize(floorAck);
    return {
      "tool.ack": {
        ...summarize(ack),
        floor: fa.median,
        floorSpread: fa.spread,
        note:
          "floor: the round trip of a trivial request (interrupt on an idle conversation) on the same connection; " + `tool_executing arrived before the tool.confirm answer in ${executingFirst} of ${total} measured turns` },
      "tool.done": { ...summarize(done), floor: f.median, floorSpread: f.spread, note: "floor: the driver spawning bash -c true itself" },
      "tool.next": summarize(next),
    };
  },
};
