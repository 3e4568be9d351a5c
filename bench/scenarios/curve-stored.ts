/**
 * Curve: what the number of stored conversations (1k / 10k / 100k) costs a
 * server that starts on them — start time, the first page of
 * conversation.list, a conversation.create (and how long it holds up another
 * client), the data dir's size — and what one conversation of 100k
 * records costs: paged conversation.get, and a subscribe whose afterSeq
 * replays the whole replay log.
 *
 * One data dir grows through the points (prefilled through the store API
 * before any server starts on it; its servers delete each conversation they create). The long
 * conversation has a template dir of its own, copied for each launch, since
 * the replay part appends to it.
 */
import { execFileSync } from "node:child_process";
import { cp, rm } from "node:fs/promises";
import { connect, type AgentwireClient } from "../client.js";
import { LONG_FIGURES, STORED_FIGURES, curveRowId, curveRowIds, standInNote } from "../curve-rows.js";
import { prefillConversations } from "../prefill-conversations.js";
import { startServer, tempDir } from "../processes.js";
import type { RowResult } from "../rows.js";
import { median, summarize } from "../stats.js";
import { benchConversationId, prefillDataDir } from "../store-append.js";
import type { Scenario } from "./scenario.js";

/** No model is called. */
const UNUSED_MODEL_URL = "http://127.0.0.1:9/v1";
const LIST_LIMIT = 50;
const PAGE = 100;
/** Repeated calls per launch after the first. */
const REPEATS = 5;
/** message.append requests in flight while the replay log is filled. */
const APPENDS_IN_FLIGHT = 64;

async function timed<T>(call: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const result = await call();
  return [performance.now() - t0, result];
}

function duMiB(dir: string): number {
  return Number(execFileSync("du", ["-sk", dir], { encoding: "utf8" }).split(/\s/)[0]) / 1024;
}

export const curveStored: Scenario = {
  name: "curve: stored",
  rows: [...curveRowIds("stored"), ...curveRowIds("long")],
  describe: (cfg) =>
    `${cfg.curveStored.map((p) => p.count).join(" / ")} stored conversations (empty; one data dir grown through the points), ` +
    `conversation.list {limit: ${LIST_LIMIT}}; one conversation of ${cfg.curveLongRecords} records of ~300 B: conversation.get pages of ${PAGE}, ` +
    `and subscribe with afterSeq over ${cfg.curveReplayEvents} events (--event-log-size ${cfg.curveReplayEvents}, filled by message.append); ` +
    `${cfg.launches} launch${cfg.launches === 1 ? "" : "es"} per point, 1 first call + ${REPEATS} repeated per launch`,
  async run({ cfg, log }) {
    const samples = new Map<string, number[][]>();
    const push = (id: string, values: number[]) => samples.set(id, [...(samples.get(id) ?? []), values]);
    const notes = new Map<string, string>();

    const dir = await tempDir("curve-stored");
    try {
      let stored = 0;
      let prefillMs = 0;
      for (const point of cfg.curveStored) {
        const t0 = performance.now();
        await prefillConversations(dir, stored, point.count);
        prefillMs += performance.now() - t0;
        log(`curve stored: prefilled ${stored} → ${point.count} conversations (${((performance.now() - t0) / 1000).toFixed(1)} s; ${(prefillMs / 1000).toFixed(1)} s in all)`);
        stored = point.count;
        push(curveRowId.stored(point.id, "prefill"), [prefillMs / 1000]);
        push(curveRowId.stored(point.id, "du"), [duMiB(dir)]);
        for (let launch = 0; launch < cfg.launches; launch++) {
          const server = await startServer(UNUSED_MODEL_URL, { dataDir: dir });
          try {
            const client = await connect(server.url);
            const list = () => client.conversation.list({ limit: LIST_LIMIT });
            const [firstMs, first] = await timed(list);
            const expected = Math.min(LIST_LIMIT, point.count);
            if (first.data.length !== expected) throw new Error(`conversation.list returned ${first.data.length} of ${expected}`);
            if (first.data[0]?.id !== `stored-${point.count - 1}`) throw new Error(`newest first: got ${first.data[0]?.id}, expected stored-${point.count - 1}`);
            const again: number[] = [];
            for (let i = 0; i < REPEATS; i++) again.push((await timed(list))[0]);
            // A create (then its delete, so the data dir stays as prefilled) while a second client asks
            // server.status back to back: the longest of those waits is what a create holds everyone else up.
            const other = await connect(server.url);
            const creates: number[] = [];
            const waits: number[] = [];
            for (let i = 0; i < REPEATS; i++) {
              let creating = true;
              let longest = 0;
              const pinging = (async () => {
                while (creating) longest = Math.max(longest, (await timed(() => other.server.status()))[0]);
              })();
              const [createMs, created] = await timed(() => client.conversation.create({ title: "curve create" }));
              creating = false;
              await pinging;
              creates.push(createMs);
              waits.push(longest);
              await client.conversation.delete({ conversationId: created.id });
            }
            await other.close();
            push(curveRowId.stored(point.id, "create"), creates);
            push(curveRowId.stored(point.id, "create_wait"), waits);
            push(curveRowId.stored(point.id, "start"), [server.startMs]);
            push(curveRowId.stored(point.id, "list_first"), [firstMs]);
            push(curveRowId.stored(point.id, "list_again"), again);
            log(
              `curve stored ${point.count} launch ${launch + 1}: start ${server.startMs.toFixed(0)} ms, list ${firstMs.toFixed(2)} ms then ${median(again).toFixed(2)} ms, ` +
                `create ${median(creates).toFixed(2)} ms (another client's longest wait ${median(waits).toFixed(2)} ms)`,
            );
            await client.close();
          } finally {
            await server.close();
          }
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    const template = await tempDir("curve-long-template");
    try {
      const t0 = performance.now();
      await prefillDataDir(template, [cfg.curveLongRecords]);
      const longPrefillS = (performance.now() - t0) / 1000;
      log(`curve stored: prefilled one conversation of ${cfg.curveLongRecords} records in ${longPrefillS.toFixed(1)} s`);
      notes.set("long", `prefilled through the store API in ${longPrefillS.toFixed(1)} s; data dir ${duMiB(template).toFixed(1)} MiB`);
      for (let launch = 0; launch < cfg.launches; launch++) {
        const dataDir = await tempDir("curve-long");
        try {
          await cp(template, dataDir, { recursive: true });
          const server = await startServer(UNUSED_MODEL_URL, { dataDir, extraArgs: ["--event-log-size", String(cfg.curveReplayEvents)] });
          const clients: AgentwireClient[] = [];
          try {
            const client = await connect(server.url);
            clients.push(client);
            const conversationId = benchConversationId(cfg.curveLongRecords);
            const page = async (recordsFrom: number) => {
              const [ms, result] = await timed(() => client.conversation.get({ conversationId, includeRecords: true, recordsFrom, recordsLimit: PAGE }));
              if (result.records?.length !== PAGE) throw new Error(`conversation.get from ${recordsFrom} returned ${result.records?.length} records, expected ${PAGE}`);
              return ms;
            };
            const middle = Math.floor(cfg.curveLongRecords / 2);
            push(curveRowId.long("get_first"), [await page(0)]);
            push(curveRowId.long("get_first_again"), await repeat(() => page(0)));
            push(curveRowId.long("get_middle"), [await page(middle)]);
            push(curveRowId.long("get_middle_again"), await repeat(() => page(middle)));

            // Fill the replay log: events after `before`; the log keeps the last curveReplayEvents of them.
            const before = (await client.conversation.subscribe({ conversationId })).state.seq;
            for (let sent = 0; sent < cfg.curveReplayEvents; sent += APPENDS_IN_FLIGHT) {
              const batch = Math.min(APPENDS_IN_FLIGHT, cfg.curveReplayEvents - sent);
              await Promise.all(Array.from({ length: batch }, (_, i) => client.message.append({ conversationId, role: "user", content: `replay filler ${sent + i}` })));
            }
            const latest = (await client.conversation.subscribe({ conversationId })).state.seq;
            if (latest - before < cfg.curveReplayEvents) throw new Error(`only ${latest - before} events after ${cfg.curveReplayEvents} appends`);
            const afterSeq = latest - cfg.curveReplayEvents;
            const watcher = await connect(server.url);
            clients.push(watcher);
            let received = 0;
            watcher.onAny((_method, params: any) => {
              if (params?.conversationId === conversationId && params.seq > afterSeq) received++;
            });
            const replay = async () => {
              received = 0;
              const [ms, result] = await timed(() => watcher.conversation.subscribe({ conversationId, afterSeq }));
              if (result.resync || result.replayed !== cfg.curveReplayEvents || received !== cfg.curveReplayEvents) {
                throw new Error(`replay: resync ${result.resync}, replayed ${result.replayed}, received ${received}, expected ${cfg.curveReplayEvents}`);
              }
              await watcher.conversation.unsubscribe({ conversationId });
              return ms;
            };
            const replays = [await replay(), ...(await repeat(replay))];
            push(curveRowId.long("replay"), replays);
            log(
              `curve stored, long launch ${launch + 1}: get first ${samples.get(curveRowId.long("get_first"))!.at(-1)![0].toFixed(1)} ms, ` +
                `middle ${samples.get(curveRowId.long("get_middle"))!.at(-1)![0].toFixed(1)} ms, replay of ${cfg.curveReplayEvents} events ${replays.map((ms) => ms.toFixed(1)).join(", ")} ms`,
            );
          } finally {
            await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
            await server.close();
          }
        } finally {
          await rm(dataDir, { recursive: true, force: true });
        }
      }
    } finally {
      await rm(template, { recursive: true, force: true });
    }

    const out: Record<string, RowResult> = {};
    for (const point of cfg.curveStored) {
      const standIn = standInNote(point, "conversations");
      for (const figure of STORED_FIGURES) {
        const id = curveRowId.stored(point.id, figure.key);
        const note =
          figure.key === "prefill"
            ? `${standIn}store.create of empty conversations in the driver process, up to 1000 in flight, before any server starts; one per run`
            : figure.key === "du"
              ? `${standIn}du -sk of the data dir (index.json, one folder and meta.json per conversation); one per run`
              : figure.key === "start"
                ? `${standIn}one start per launch, the data dir in the page cache`
                : figure.key === "create" || figure.key === "create_wait"
                  ? `${standIn}${REPEATS} creates per launch after the list calls, each deleted after; meanwhile a second connection sends server.status back to back (create_wait: the longest of them per create)`
                : `${standIn}the conversation.list request sent → its answer; the start-up check of every conversation (reading each meta.json) runs meanwhile in the background`;
        out[id] = { ...summarize(samples.get(id) ?? []), note };
      }
    }
    const standIn = standInNote({ id: "100k", count: cfg.curveLongRecords }, `records (and a replay log of ${cfg.curveReplayEvents} events)`);
    for (const figure of LONG_FIGURES) {
      const id = curveRowId.long(figure.key);
      const note =
        figure.key === "replay"
          ? `${standIn}request sent → answer, which comes after the ${cfg.curveReplayEvents} replayed notifications (all counted by the client); per launch 1 + ${REPEATS} subscribes on a second connection (unsubscribed in between)`
          : `${standIn}${notes.get("long")}; recordsLimit ${PAGE}, the middle page from record ${Math.floor(cfg.curveLongRecords / 2)}`;
      out[id] = { ...summarize(samples.get(id) ?? []), note };
    }
    return out;
  },
};

async function repeat(call: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < REPEATS; i++) out.push(await call());
  return out;
}
