/**
 * The loop prepares a call that waits for approval (Tool.prepare: the shell
 * tool holds its process, the command not run) and undoes the preparation
 * when the call does not run; an approved call runs in what was prepared.
 * Linux: the held process is found by its command line in /proc.
 */
import { existsSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import type { ChatRequest, LlmProvider, StreamEvent } from "../../src/llm/provider.js";
import { createBuiltinRegistry } from "../../src/tools/builtin-registry.js";
import { createShellTool } from "../../src/tools/shell.js";
import { newConversation } from "../harness/agent-fixture.js";
import { processesWith, waitGone } from "../harness/process-liveness.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const workDir = realpathSync(mkdtempSync(join(tmpdir(), "agentwire-tool-prepare-")));

/** The commands the model proposes next, one call each. */
let proposed: string[] = [];

const provider: LlmProvider = {
  async *stream(request: ChatRequest): AsyncGenerator<StreamEvent> {
    if (request.messages.at(-1)?.role === "tool") {
      yield { type: "text", delta: "ok" };
      yield { type: "done", finishReason: "stop", usage: null, toolCalls: [] };
      return;
    }
    const round = proposed.map((command, i) => ({ id: `call_${Date.now()}_${i}`, name: "shell", arguments: JSON.stringify({ command }) }));
    yield { type: "done", finishReason: "tool_calls", usage: null, toolCalls: round };
  },
  async listModels() {
    return [];
  },
};


let server: TestServer;
let client: AgentwireClient;

beforeAll(async () => {
  const shell = createShellTool({ env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: workDir } });
  server = await startTestServer({ model: "fake-model" }, { tools: createBuiltinRegistry([shell]), provider: async () => provider });
  client = await server.connectInMemory();
});

afterAll(async () => {
  await server?.close();
  rmSync(workDir, { recursive: true, force: true });
});

async function offered(...commands: string[]) {
  proposed = commands;
  const { id, events } = await newConversation(client, { workspace: workDir, settings: { approval: "ask" } });
  const { generationId } = await client.step({ conversationId: id });
  const pending = (await events.waitForMethod("tool_pending")).params as { toolCallId: string };
  return { id, events, generationId, toolCallId: pending.toolCallId };
}

it.runIf(process.platform === "linux")("holds a waiting shell call's process, and kills it when the call is skipped", async () => {
  const marker = join(workDir, "skipped-ran");
  const { id, events, generationId, toolCallId } = await offered(`touch ${marker}`);
  const held = processesWith(marker);
  expect(held).toHaveLength(1);
  await client.tool.confirm({ conversationId: id, toolCallId, action: "skip" });
  await events.waitForEnd(generationId);
  expect(await waitGone(held, 2000)).toEqual([]);
  expect(existsSync(marker)).toBe(false);
});

it.runIf(process.platform === "linux")("runs an approved call in the held process", async () => {
  const marker = join(workDir, "approved-ran");
  const { id, events, generationId, toolCallId } = await offered(`touch ${marker}; echo $$`);
  const [held] = processesWith(marker);
  expect(held).toBeDefined();
  await client.tool.confirm({ conversationId: id, toolCallId, action: "confirm" });
  await events.waitForEnd(generationId);
  const completed = events.of("tool_completed");
  expect(completed).toHaveLength(1);
  expect(completed[0]!.record.result).toBe(`${held}\n`);
  expect(existsSync(marker)).toBe(true);
});

it.runIf(process.platform === "linux")("has the store ready for the approved call's records while it waits, and holds no file open after the round", async () => {
  const { id, events, generationId, toolCallId } = await offered("true");
  // The lowdb store's journal is opened ahead (ConversationHandle.prepareReplaces): storing the call as
  // executing, the approval's first step, is then one write.
  const journal = join(server.dataDir, "conversations", id, "replaced.jsonl");
  await expect.poll(() => openHere(journal)).toBe(true);
  await client.tool.confirm({ conversationId: id, toolCallId, action: "confirm" });
  await events.waitForEnd(generationId);
  expect(events.of("tool_completed")).toHaveLength(1);
  // The reply after the result closed the round: the journal keeps its lines, but no descriptor.
  expect(existsSync(journal)).toBe(true);
  expect(openHere(journal)).toBe(false);
});

/** Whether this process (the server runs in it) has `path` open. */
function openHere(path: string): boolean {
  return readdirSync("/proc/self/fd").some((fd) => {
    try {
      return readlinkSync(join("/proc/self/fd", fd)) === path;
    } catch {
      return false; // closed meanwhile
    }
  });
}

it.runIf(process.platform === "linux")("holds at most four processes for one round", async () => {
  const token = join(workDir, "round-of-six");
  const { id, events, generationId } = await offered(...[1, 2, 3, 4, 5, 6].map((n) => `echo ${token}-${n}`));
  await events.waitForCount("tool_pending", 6);
  const held = processesWith(token);
  expect(held).toHaveLength(4);
  await client.interrupt({ conversationId: id });
  await events.waitForEnd(generationId);
  expect(await waitGone(held, 2000)).toEqual([]);
});
