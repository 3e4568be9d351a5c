/**
 * "No tool process outlives the server" (DESIGN, invariants), however the
 * server ends. The server is the real `agentwire serve` in a child process;
 * the fake OpenAI server proposes one shell call that records its pid and
 * process group in a file and sleeps. Once the file exists the server is
 * killed — with SIGKILL, so nothing in it runs — and the group must be gone.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { killAllCli, runCli, type CliProcess } from "../harness/cli-process.js";
import { isLiving, killGroupQuietly, killQuietly, livingGroupMembers, msUntil, msUntilGroupGone } from "../harness/tool-processes.js";

let dir: string;
let fake: FakeOpenAI;
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-lifetime-"));
  fake = await startFakeOpenAI({ apiKey: "test-key" });
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await killAllCli();
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

function serve(): CliProcess {
  return runCli(["serve", "--port", "0", "--data-dir", join(dir, "data"), "--log-level", "silent"], {
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: "test-key",
    AGENTWIRE_MODEL: "fake-model",
  });
}

async function connect(url: string): Promise<AgentwireClient> {
  const client = await AgentwireClient.connect(url, { WebSocket: WebSocket as never });
  cleanups.push(() => client.close().catch(() => {}));
  return client;
}

/**
 * Starts a server whose model proposes a long shell call, confirms it and
 * waits until the command has written "PID PGID" to a file. Returns the
 * server, the conversation and the command's process group.
 */
async function serverRunningLongTool(prefix = "") {
  const pidFile = join(dir, "tool.pid");
  const command = `${prefix}${writeAtomically(pidFile, "$$ $(cut -d' ' -f5 /proc/$$/stat)")}; sleep 30`;
  fake.enqueue({ kind: "reply", text: ["Running it."], toolCalls: [{ id: "long_1", name: "shell", args: JSON.stringify({ command }) }] });
  const server = serve();
  const client = await connect(await server.listening(20_000));
  const { id, events } = await newConversation(client);
  await client.step({ conversationId: id });
  await events.waitForMethod("tool_pending", 10_000);
  await client.tool.confirm({ conversationId: id, toolCallId: "long_1", action: "confirm" });
  const [pid, pgid] = (await readWhenWritten(pidFile)).split(" ").map(Number);
  cleanups.push(() => killGroupQuietly(pgid!));
  // The command leads its own group (that is how interrupt reaches its children).
  expect(pgid).toBe(pid);
  expect(livingGroupMembers(pgid!).length).toBeGreaterThan(0);
  return { server, client, conversationId: id, events, pgid: pgid! };
}

/** A shell snippet writing `text` to `file` through a temporary name, so the file is never seen half-written. */
function writeAtomically(file: string, text: string): string {
  return `echo "${text}" > ${file}.tmp && mv ${file}.tmp ${file}`;
}

async function readWhenWritten(file: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the tool command never wrote ${file}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return readFileSync(file, "utf8").trim();
}

describe("tool processes end with the server", { timeout: 40_000 }, () => {
  it("kill -9 of the server: the running command's process group is gone within 2 s, and the restarted server says so", async () => {
    const { server, conversationId, pgid } = await serverRunningLongTool();

    server.child.kill("SIGKILL");
    await server.exited;
    const goneAfterMs = await msUntilGroupGone(pgid, 2000);
    expect(goneAfterMs, `group ${pgid} still has ${livingGroupMembers(pgid).join(", ")} 2 s after kill -9`).toBeDefined();

    // The next server finds the call "executing" and reports it stopped with the server.
    const again = serve();
    const client = await connect(await again.listening(20_000));
    const { records } = await client.conversation.get({ conversationId, includeRecords: true });
    const call = records!.find((r) => r.type === "tool_call");
    expect(call).toMatchObject({ toolCallId: "long_1", status: "failed", success: false });
    expect(call!.type === "tool_call" && call!.result).toMatch(/stopped with the server/);
  });

  it("kill -9 also ends a process that left the group and the session (setsid), found by its environment", async () => {
    const escapeeFile = join(dir, "escapee.pid");
    const escape = `setsid sh -c '${writeAtomically(escapeeFile, "$$ $(cut -d\" \" -f6 /proc/$$/stat)")}; exec sleep 30' </dev/null >/dev/null 2>&1 & `;
    const { server, pgid } = await serverRunningLongTool(escape);
    const [escapee, session] = (await readWhenWritten(escapeeFile)).split(" ").map(Number);
    cleanups.push(() => killQuietly(escapee!));
    expect(session).toBe(escapee); // a session (and group) of its own: no group kill reaches it
    expect(isLiving(escapee!)).toBe(true);

    server.child.kill("SIGKILL");
    await server.exited;
    expect(await msUntilGroupGone(pgid, 2000)).toBeDefined();
    expect(await msUntil(() => !isLiving(escapee!), 2000), `escaped pid ${escapee} survived`).toBeDefined();
  });

  it("kill -9 also ends a background job that a finished call left running", async () => {
    const jobFile = join(dir, "job.pid");
    // The job redirects its output, so the call completes at once and leaves it running.
    const command = `(${writeAtomically(jobFile, "$BASHPID")}; exec sleep 30) </dev/null >/dev/null 2>&1 &`;
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "bg_1", name: "shell", args: JSON.stringify({ command }) }] }, { kind: "reply", text: ["Started."] });
    const server = serve();
    const client = await connect(await server.listening(20_000));
    const { id, events } = await newConversation(client);
    const { generationId } = await client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId, 10_000);
    expect(events.methods()).toContain("tool_completed");
    const job = Number(await readWhenWritten(jobFile));
    cleanups.push(() => killQuietly(job));
    expect(isLiving(job)).toBe(true);

    server.child.kill("SIGKILL");
    await server.exited;
    expect(await msUntil(() => !isLiving(job), 2000), `background job ${job} survived`).toBeDefined();
  });

  it("SIGTERM of the server: the group is killed before it exits", async () => {
    const { server, pgid } = await serverRunningLongTool();
    server.child.kill("SIGTERM");
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(await msUntilGroupGone(pgid, 500)).toBeDefined();
  });
});
