/**
 * A tool's result leaves before the loop goes on to the next model call.
 * The WebSocket transport sends what one tick wrote once the tick is over
 * (it corks the socket until process.nextTick); the link here does the same,
 * so a loop that went on building the next request in the same tick would
 * hold tool_completed back until that work was done.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { AgentwireClient } from "../../clients/typescript/index.js";
import type { ChatRequest, LlmProvider, StreamEvent } from "../../src/llm/provider.js";
import { createBuiltinRegistry } from "../../src/tools/builtin-registry.js";
import type { Tool } from "../../src/tools/tool.js";
import type { Link } from "../../src/transport/link.js";
import { inMemoryWebSocket, type LinkAcceptor } from "../../src/transport/in-memory-link.js";
import { newConversation } from "../harness/agent-fixture.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

const instant: Tool = {
  name: "instant",
  description: "Answers at once.",
  parameters: z.strictObject({}),
  async run() {
    return { success: true, output: "done" };
  },
};

/** Frames the server has handed to the link so far and that left it (flushed at the end of their tick). */
const left: string[] = [];
/** Whether tool_completed had left when the model was called again, one entry per such call. */
const seenAtNextCall: boolean[] = [];

const provider: LlmProvider = {
  async *stream(request: ChatRequest): AsyncGenerator<StreamEvent> {
    if (!request.messages.some((m) => m.role === "tool")) {
      yield { type: "done", finishReason: "tool_calls", usage: null, toolCalls: [{ id: "call_1", name: "instant", arguments: "{}" }] };
      return;
    }
    seenAtNextCall.push(left.some((frame) => frame.includes('"method":"tool_completed"')));
    yield { type: "text", delta: "ok" };
    yield { type: "done", finishReason: "stop", usage: null, toolCalls: [] };
  },
  async listModels() {
    return [];
  },
};

/** Serves links that hold what a tick sends until process.nextTick, as websocket-server.ts corks its socket. */
function corking(server: LinkAcceptor): LinkAcceptor {
  return {
    acceptLink(link: Link) {
      let held: string[] = [];
      return server.acceptLink({
        ...link,
        send(frame) {
          if (held.length === 0) {
            process.nextTick(() => {
              const out = held;
              held = [];
              for (const f of out) {
                left.push(f);
                link.send(f);
              }
            });
          }
          held.push(frame);
        },
      });
    },
  };
}

let server: TestServer;
let client: AgentwireClient;

beforeAll(async () => {
  server = await startTestServer({ model: "fake-model" }, { tools: createBuiltinRegistry([instant]), provider: async () => provider });
  client = await AgentwireClient.connect("memory://agentwire", { WebSocket: inMemoryWebSocket(corking(server.server)) });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

it("sends tool_completed before the next model call is made", async () => {
  // A prompt of its own: the default one reads the workspace, which would end the tick anyway.
  const { id, events } = await newConversation(client, { system: "test", settings: { approval: "auto" } });
  const { generationId } = await client.step({ conversationId: id });
  await events.waitForEnd(generationId);
  expect(events.of("tool_completed")).toHaveLength(1);
  expect(seenAtNextCall).toEqual([true]);
});
