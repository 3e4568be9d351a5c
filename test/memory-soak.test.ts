/**
 * A client cannot grow the server's memory without bound with valid
 * requests (issue: every 4 MB append grew RSS by 8 MB — the record stayed
 * loaded and its frame stayed in a replay log with no byte limit — until the
 * process died of heap exhaustion after about 2 GB).
 *
 * A real server process with default limits takes 300 MB of 1 MB appends
 * spread over 100 subscribed conversations; its RSS must stay under a stated
 * ceiling. The same run at 2 GB is `npm run soak` (bench/soak-memory.ts).
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { killAllCli, runCli } from "./harness/cli-process.js";
import { openInitialized } from "./harness/test-server.js";

/** What the defaults must keep the server under after these appends (idle RSS is about 60 MiB). */
const CEILING_MIB = 400;

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

let dataDir: string | undefined;
afterAll(async () => {
  await killAllCli();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

it(`keeps RSS under ${CEILING_MIB} MiB through 300 MB of 1 MB appends over 100 conversations`, async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentwire-soak-"));
  const cli = runCli(["serve", "--port", "0", "--data-dir", dataDir, "--log-level", "warn"]);
  const url = await cli.listening();
  const pid = cli.child.pid!;
  const raw = await openInitialized(url);
  let nextId = 1;
  const call = async (method: string, params: unknown): Promise<any> => {
    const id = nextId++;
    raw.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    for (;;) {
      const frame: any = await raw.next(30_000);
      if (frame.id === id) {
        if (frame.error) throw new Error(`${method}: ${frame.error.message}`);
        return frame.result;
      }
    }
  };
  const ids: string[] = [];
  for (let i = 0; i < 100; i++) {
    const { id } = await call("conversation.create", {});
    await call("conversation.subscribe", { conversationId: id });
    ids.push(id);
  }
  const content = "m".repeat(1_000_000);
  let peak = 0;
  for (let round = 0; round < 3; round++) {
    for (const conversationId of ids) {
      await call("message.append", { conversationId, role: "user", content });
    }
    peak = Math.max(peak, rssMiB(pid));
  }
  const status = await call("server.status", {});
  raw.close();
  expect(status.conversationsStored).toBe(100);
  expect(peak, `peak RSS ${peak.toFixed(0)} MiB`).toBeLessThan(CEILING_MIB);
}, 120_000);
