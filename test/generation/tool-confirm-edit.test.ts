/**
 * Edited tool arguments are checked like every other params: unknown keys
 * are refused (issue: `{command: "echo", x: <10k nested arrays>}` was
 * accepted and then broke the generation while serialising); the frame
 * depth limit itself is tested in frame-limits.test.ts.
 */
import { expect, it } from "vitest";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { rpcError } from "../harness/rpc-errors.js";

const fx = useAgentFixture();

it("refuses an unknown key in edited arguments with -32602 naming arguments.<key>; the call stays pending and a valid edit runs", async () => {
  fx.fake.enqueue(
    { kind: "reply", toolCalls: [{ id: "call_1", name: "shell", args: JSON.stringify({ command: "echo original" }) }] },
    { kind: "reply", text: ["done"] },
  );
  const { id, events } = await newConversation(fx.client);
  const { generationId } = await fx.client.step({ conversationId: id });
  await events.waitForMethod("tool_pending");
  const error = await rpcError(
    fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "edit", arguments: { command: "echo", x: [[[1]]] } }),
  );
  expect(error.code).toBe(-32602);
  const issues = (error.data as { issues: { path: string; code: string }[] }).issues;
  expect(issues).toEqual([expect.objectContaining({ path: "arguments", code: "unrecognized_keys" })]);
  expect(error.message).toContain('"x"');
  expect((await fx.client.conversation.get({ conversationId: id })).state.pendingTools).toHaveLength(1);

  await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "edit", arguments: { command: "echo edited" } });
  expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
});
