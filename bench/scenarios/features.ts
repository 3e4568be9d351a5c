/**
 * Features in the stream: issue 27 asks for "the same figures with usage
 * notices, plans and diffs in the stream". Each measured turn runs twice in
 * one launch, back to back: a plain paced turn in a fresh conversation (the
 * floor), and the same paced turn in a conversation that first set a plan
 * (the fake's `bench-plan`: update_plan → plan_updated) and made an edit the
 * driver approved after seeing its diff (`bench-edit`: edit_file →
 * tool_pending with `changes` → tool.confirm → generation_diff_updated).
 * Usage notices (usage_updated) come with every model call in both. The
 * per-token latency and the server's CPU of the two paced turns are compared.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import { agentTurn, connect, newConversation, nextNotification, USER_TEXT, watchGeneration } from "../client.js";
import { cpuMs, startFake, startServer } from "../processes.js";
import { nsToMs, percentile, summarize, summarizeWithFloor } from "../stats.js";
import { launchesText, turns, type Scenario } from "./scenario.js";

const NOTES = "line one\nline two\nline three\n";

/** What the features turn saw before its paced turn: each must be there, or the comparison means nothing. */
interface Seen {
  plan: number;
  diff: number;
  usage: number;
  changes: number;
}

/** Plan, then an approved edit, in a conversation whose workspace holds notes.txt. */
async function featureConversation(client: AgentwireClient, workspace: string, seen: Seen): Promise<{ conversationId: string; editDoneMs: number }> {
  await writeFile(join(workspace, "notes.txt"), NOTES);
  const { id: conversationId } = await client.conversation.create({ title: "bench features", workspace });
  await client.conversation.subscribe({ conversationId });
  const disposers = [
    client.on("plan_updated", (n) => void (n.conversationId === conversationId && seen.plan++)),
    client.on("generation_diff_updated", (n) => void (n.conversationId === conversationId && seen.diff++)),
    client.on("usage_updated", (n) => void (n.conversationId === conversationId && seen.usage++)),
  ];
  try {
    await client.message.append({ conversationId, role: "user", content: USER_TEXT });
    const planned = watchGeneration(client, conversationId, 30_000);
    const planPending = nextNotification(client, "tool_pending", conversationId, 30_000);
    await client.step({ conversationId, model: "bench-plan" });
    const plan = (await planPending).params;
    if (!plan.autoConfirmed) await client.tool.confirm({ conversationId, toolCallId: plan.toolCallId, action: "confirm" });
    await planned.done;

    await client.message.append({ conversationId, role: "user", content: "Now fix line two." });
    const edited = watchGeneration(client, conversationId, 30_000);
    const editPending = nextNotification(client, "tool_pending", conversationId, 30_000);
    await client.step({ conversationId, model: "bench-edit" });
    const edit = (await editPending).params;
    if (edit.changes?.length) seen.changes++;
    const completed = nextNotification(client, "tool_completed", conversationId, 30_000);
    const approvedNs = process.hrtime.bigint();
    if (!edit.autoConfirmed) await client.tool.confirm({ conversationId, toolCallId: edit.toolCallId, action: "confirm" });
    const editDoneMs = nsToMs((await completed).atNs - approvedNs);
    await edited.done;
    await client.message.append({ conversationId, role: "user", content: USER_TEXT });
    return { conversationId, editDoneMs };
  } finally {
    for (const dispose of disposers) dispose();
  }
}

export const features: Scenario = {
  name: "features",
  rows: ["features.p50", "features.p99", "features.cpu", "features.edit_done"],
  describe: (cfg) =>
    `${cfg.pacedTokens} tokens at ${cfg.pacedDelayMs} ms after a plan and an approved edit (with its diff), beside the same turn in a fresh conversation; ${launchesText(cfg, cfg.pacedTurns)}`,
  async run({ cfg, log }) {
    const model = `bench-paced-${cfg.pacedTokens}-${cfg.pacedDelayMs}`;
    const schedule = { warmup: cfg.warmup, turns: cfg.pacedTurns };
    const fake = await startFake();
    const workspace = await mkdtemp(join(tmpdir(), "agentwire-bench-features-"));
    const p50: number[][] = [];
    const p99: number[][] = [];
    const plainP50: number[][] = [];
    const plainP99: number[][] = [];
    const cpu: number[][] = [];
    const plainCpu: number[][] = [];
    const editDone: number[][] = [];
    const seen: Seen = { plan: 0, diff: 0, usage: 0, changes: 0 };
    let featureTurns = 0;
    try {
      for (let launch = 0; launch < cfg.launches; launch++) {
        const server = await startServer(fake.url);
        try {
          const client = await connect(server.url);
          const measured = await turns(schedule, async () => {
            const plainId = await newConversation(client);
            const c0 = cpuMs(server.pid);
            const plain = await agentTurn(client, plainId, model);
            const c1 = cpuMs(server.pid);
            const { conversationId, editDoneMs } = await featureConversation(client, workspace, seen);
            const c2 = cpuMs(server.pid);
            const featured = await agentTurn(client, conversationId, model);
            const c3 = cpuMs(server.pid);
            for (const turn of [plain, featured]) {
              if (turn.tokens !== cfg.pacedTokens) throw new Error(`turn delivered ${turn.tokens} of ${cfg.pacedTokens} tokens`);
            }
            featureTurns++;
            return { plain: plain.latencies, featured: featured.latencies, plainCpu: c1 - c0, cpu: c3 - c2, editDoneMs };
          });
          const all = measured.flatMap((m) => m.featured);
          const plainAll = measured.flatMap((m) => m.plain);
          p50.push([percentile(all, 0.5)]);
          p99.push([percentile(all, 0.99)]);
          plainP50.push([percentile(plainAll, 0.5)]);
          plainP99.push([percentile(plainAll, 0.99)]);
          cpu.push(measured.map((m) => m.cpu));
          plainCpu.push(measured.map((m) => m.plainCpu));
          editDone.push(measured.map((m) => m.editDoneMs));
          log(
            `features launch ${launch + 1}: p50 ${percentile(all, 0.5).toFixed(3)} p99 ${percentile(all, 0.99).toFixed(3)} ms | plain p50 ` +
              `${percentile(plainAll, 0.5).toFixed(3)} p99 ${percentile(plainAll, 0.99).toFixed(3)} ms | CPU ${measured.map((m) => m.cpu).join("/")} vs ` +
              `${measured.map((m) => m.plainCpu).join("/")} ms`,
          );
          await client.close();
        } finally {
          await server.close();
        }
      }
    } finally {
      await rm(workspace, { recursive: true, force: true });
      await fake.stop();
    }
    // Every warm-up and measured feature conversation must have shown each feature, or the rows compare two plain turns.
    const conversations = featureTurns;
    const missing = (Object.entries(seen) as [keyof Seen, number][]).filter(([, count]) => count < conversations).map(([name]) => name);
    if (missing.length > 0) throw new Error(`feature conversations did not all show: ${missing.join(", ")} (${JSON.stringify(seen)} over ${conversations})`);
    const note = `floor: the same paced turn in a fresh conversation, same launch, just before; each feature conversation showed plan_updated, tool_pending with changes (a diff), generation_diff_updated and usage_updated (${seen.usage} usage notices over ${conversations} conversations)`;
    return {
      "features.p50": summarizeWithFloor(p50, plainP50, note),
      "features.p99": summarizeWithFloor(p99, plainP99, note),
      "features.cpu": summarizeWithFloor(cpu, plainCpu, "server utime+stime over the paced turn alone; floor: the plain turn's"),
      "features.edit_done": { ...summarize(editDone), note: "edit_file of one line, the diff shown in tool_pending: approve → tool_completed" },
    };
  },
};
