/**
 * The loop prepares a call that waits for approval (Tool.prepare: the shell
 * tool holds its process, the command not run) and undoes the preparation
 * when the call does not run; an approved call runs in what was prepared.
 * Linux: the held process is found by its command line in /proc.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import type { ChatRequest, LlmProvider, StreamEvent } from "../../src/llm/provider.js";
import { createBuiltinRegistry } from "../../src/tools/builtin-registry.js";
import { createShellTool } from "../../src/tools/shell.js";
import { newConversation } from "../harness/agent-fixture.js";
import { waitGone } from "../harness/process-liveness.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const workDir = realpathSync(mkdtempSync(join(tmpdir(), "agentwire-tool-prepare-")));

/** The command the model proposes next. */
let proposed = "";

const provider: LlmProvider = {
  async *stream(request: ChatRequest): AsyncGenerator<StreamEvent> {
    if (request.messages.at(-1)?.role === "tool") {
      yield { type: "text", delta: "ok" };
      yield { type: "done", finishReason: "stop", usage: null, toolCalls: [] };
      return;
    }
    yield { type: "done", finishReason: "tool_calls", usage: null, toolCalls: [{ id: `call_${Date.now()}`, name: "shell", arguments: JSON.stringify({ command: proposed }) }] };
  },
  async listModels() {
    return [];
  },
};

function processesWith(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

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

async function offered(command: string) {
  proposed = command;
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
