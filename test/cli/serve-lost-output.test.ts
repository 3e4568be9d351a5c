/**
 * `agentwire serve` whose stdout and stderr readers are gone (the parent that
 * started it died, a log pipe closed): every later log line fails with EPIPE.
 * That failure used to be an uncaught exception whose own report to stderr
 * failed again on the next tick, forever: the server spun at full CPU and a
 * SIGTERM never finished. The shipped bundle, as a child with real pipes.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { runCli } from "../harness/cli-process.js";
import { useShippedCli } from "../harness/shipped-cli.js";

const run = useShippedCli();
let dataDir: string;

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The process's CPU time so far (utime + stime, in clock ticks of 10 ms), from /proc. */
async function cpuTicks(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

describe("serve with its output gone", { timeout: 20_000 }, () => {
  it("keeps serving without spinning, and stops on SIGTERM", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agentwire-lost-output-"));
    const cli: ReturnType<typeof runCli> = run(["serve", "--port", "0", "--data-dir", dataDir, "--log-level", "debug"], {}, dataDir);
    const url = await cli.listening();
    // The reading ends close: every write the server makes from now on fails with EPIPE.
    cli.child.stdout!.destroy();
    cli.child.stderr!.destroy();

    // Work that logs (a connection at debug level, a conversation), then the server is still there for it.
    const client = await AgentwireClient.connect(url, { WebSocket: WebSocket as never });
    const created = await client.conversation.create({ title: "after the pipes closed" });
    await client.message.append({ conversationId: created.id, role: "user", content: "hello" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Idle now: over a second it uses a small part of a core, not all of it (the loop took every tick).
    const before = await cpuTicks(cli.child.pid!);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const used = (await cpuTicks(cli.child.pid!)) - before;
    expect(used, "CPU ticks (10 ms) used in one idle second").toBeLessThan(30);
    expect((await client.conversation.get({ conversationId: created.id })).conversation.title).toBe("after the pipes closed");
    await client.close();

    // Its shutdown log line fails too; the shutdown finishes anyway.
    cli.child.kill("SIGTERM");
    const exited = await Promise.race([cli.exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 10_000))]);
    expect(exited).toEqual({ code: 0, signal: null });
  });
});
