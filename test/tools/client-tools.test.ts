/**
 * Client-provided tools (tools.register / client_tool_call / tool.result):
 * the model is offered them, their calls are approved like any other, the
 * call reaches the registering connection only and its answer reaches the
 * model; clashes, second answers, interrupts, a connection that closes
 * mid-call (grace period) and a takeover by the same client.
 */
import { describe, expect, it } from "vitest";
import { ErrorCodes, type AgentwireClient, type NotificationParams } from "../../clients/typescript/index.js";
import { newConversation, useAgentFixture, type AgentFixture } from "../harness/agent-fixture.js";
import { expectInvalidParams, rpcError } from "../harness/rpc-errors.js";

const PICK = {
  name: "pick_color",
  description: "Ask the user's editor for a colour.",
  parameters: { type: "object", properties: { hint: { type: "string" } }, required: ["hint"] },
  kind: "other" as const,
};

const NOT_PENDING = ErrorCodes.TOOL_CALL_NOT_PENDING;

type Call = NotificationParams<"client_tool_call">;

/** The client_tool_call notifications one client receives, with a way to wait for the next. */
function callsOf(client: AgentwireClient): { calls: Call[]; next(): Promise<Call> } {
  const calls: Call[] = [];
  let waiters: ((c: Call) => void)[] = [];
  client.on("client_tool_call", (params) => {
    calls.push(params);
    for (const w of waiters) w(params);
    waiters = [];
  });
  return {
    calls,
    next: () =>
      new Promise<Call>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no client_tool_call within 5 s")), 5000);
        waiters.push((c) => {
          clearTimeout(timer);
          resolve(c);
        });
      }),
  };
}

/** Register PICK from `provider`, have the model call it, confirm it; resolves with the call `provider` received. */
async function startCall(fx: AgentFixture, provider: AgentwireClient, watcher = fx.client) {
  const { id, events } = await newConversation(watcher);
  expect(await provider.tools.register({ conversationId: id, tools: [PICK] })).toEqual({ tools: ["pick_color"] });
  const received = callsOf(provider);
  fx.fake.enqueue(
    { kind: "reply", toolCalls: [{ id: "call_pick", name: "pick_color", args: '{"hint":"warm"}' }] },
    { kind: "reply", text: ["Picked."] },
  );
  const { generationId } = await watcher.step({ conversationId: id });
  const pending = (await events.waitForMethod("tool_pending")).params as NotificationParams<"tool_pending">;
  expect(pending).toMatchObject({ toolName: "pick_color", kind: "other" });
  const call = received.next();
  await watcher.tool.confirm({ conversationId: id, toolCallId: "call_pick", action: "confirm" });
  return { id, events, generationId, call: await call, received };
}

// One wire over the in-memory link, the other over a real WebSocket.
describe.each([
  ["chat", "memory"],
  ["responses", "websocket"],
] as const)("a client tool round trip (%s wire, %s transport)", (wire, transport) => {
  const fx = useAgentFixture({ wire, transport });

  it("offers the tool to the model, sends the approved call to the registering connection only, and the model reads tool.result", async () => {
    const provider = await fx.connect({ clientInfo: { name: "editor" } });
    const { id, events, generationId, call, received } = await startCall(fx, provider);
    const offered = fx.fake.requests[0]!.tools as { name?: string; function?: { name: string; parameters?: unknown } }[];
    const names = offered.map((t) => t.function?.name ?? t.name);
    expect(names).toContain("pick_color");
    expect(names).toContain("shell");

    expect(call).toMatchObject({ conversationId: id, toolCallId: "call_pick", name: "pick_color", arguments: { hint: "warm" }, generationId });
    expect(received.calls).toHaveLength(1);
    // The watcher (another connection, subscribed) never gets it.
    expect(events.of("client_tool_call")).toEqual([]);

    expect(await provider.tool.result({ conversationId: id, toolCallId: "call_pick", output: "crimson" })).toEqual({ status: "completed" });
    await events.waitForEnd(generationId);
    const completed = events.of("tool_completed")[0]!;
    expect(completed.record).toMatchObject({ toolName: "pick_color", result: "crimson", success: true });
    expect(fx.fake.messagesOf(1).find((m) => m.role === "tool")).toMatchObject({ content: "crimson" });

    // A second answer is refused.
    const again = await rpcError(provider.tool.result({ conversationId: id, toolCallId: "call_pick", output: "blue" }));
    expect(again.code).toBe(NOT_PENDING);
    expect(again.message).toContain("call_pick");
  });
});

describe("registering and answering", () => {
  const fx = useAgentFixture({ config: { limits: { clientToolGraceMs: 400 } } });

  it("refuses a name that clashes with a built-in, an MCP-style name, or another connection's tool, naming it", async () => {
    const { id } = await newConversation(fx.client);
    const other = await fx.connect();
    const shell = await expectInvalidParams(fx.client.tools.register({ conversationId: id, tools: [{ ...PICK, name: "shell" }] }), "tools[0].name");
    expect(shell.message).toContain('"shell"');
    await expectInvalidParams(fx.client.tools.register({ conversationId: id, tools: [PICK, { ...PICK, name: "mcp__x__y" }] }), "tools[1].name");
    await expectInvalidParams(fx.client.tools.register({ conversationId: id, tools: [{ ...PICK, name: "bad name" }] }), "tools[0].name");
    await expectInvalidParams(
      fx.client.tools.register({ conversationId: id, tools: [{ ...PICK, parameters: { type: "string" } }] }),
      "tools[0].parameters",
    );
    await fx.client.tools.register({ conversationId: id, tools: [PICK] });
    const clash = await expectInvalidParams(other.tools.register({ conversationId: id, tools: [PICK] }), "tools[0].name");
    expect(clash.message).toContain("another connection");
    // Unregistering frees the name; a registration replaces the earlier one.
    expect(await fx.client.tools.register({ conversationId: id, tools: [] })).toEqual({ tools: [] });
    expect(await other.tools.register({ conversationId: id, tools: [PICK] })).toEqual({ tools: ["pick_color"] });
  });

  it("goes through the approval policy like any tool: readOnly runs under auto-read-only, toolPolicy never hides it by name", async () => {
    const provider = await fx.connect();
    const received = callsOf(provider);
    const { id, events } = await newConversation(fx.client, { settings: { approval: "auto-read-only", toolPolicy: { secret_tool: "never" } } });
    await provider.tools.register({
      conversationId: id,
      tools: [
        { ...PICK, name: "peek", readOnly: true },
        { ...PICK, name: "secret_tool" },
      ],
    });
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_peek", name: "peek", args: '{"hint":"x"}' }] }, { kind: "reply", text: ["ok"] });
    const { generationId } = await fx.client.step({ conversationId: id });
    const call = await received.next();
    expect(call.name).toBe("peek");
    expect(events.of("tool_pending")[0]).toMatchObject({ toolName: "peek", autoConfirmed: true, autoReason: "policy" });
    const offered = (fx.fake.requests[0]!.tools as { name?: string; function?: { name: string } }[]).map((t) => t.function?.name ?? t.name);
    expect(offered).toContain("peek");
    expect(offered).not.toContain("secret_tool");
    await provider.tool.result({ conversationId: id, toolCallId: "call_peek", output: "seen" });
    await events.waitForEnd(generationId);
  });

  it("lets only the connection the call was sent to answer it, once", async () => {
    const provider = await fx.connect({ clientInfo: { name: "editor" } });
    const { id, events, generationId } = await startCall(fx, provider);
    const stranger = await rpcError(fx.client.tool.result({ conversationId: id, toolCallId: "call_pick", output: "x" }));
    expect(stranger.code).toBe(-32602);
    expect(stranger.message).toContain("only the connection that registered");
    expect(await provider.tool.result({ conversationId: id, toolCallId: "call_pick", output: "no colour", isError: true })).toEqual({ status: "failed" });
    await events.waitForEnd(generationId);
    expect(events.of("tool_failed")[0]!.record).toMatchObject({ result: "no colour", success: false });
    expect((await rpcError(provider.tool.result({ conversationId: id, toolCallId: "call_pick", output: "x" }))).code).toBe(NOT_PENDING);
    expect((await rpcError(provider.tool.result({ conversationId: id, toolCallId: "call_none", output: "x" }))).code).toBe(ErrorCodes.TOOL_CALL_NOT_FOUND);
  });

  it("interrupt ends a call waiting for the client; a late answer is refused", async () => {
    const provider = await fx.connect({ clientInfo: { name: "editor" } });
    const { id, events, generationId } = await startCall(fx, provider);
    await fx.client.interrupt({ conversationId: id });
    await events.waitForEnd(generationId);
    expect(events.of("interrupted")).toHaveLength(1);
    expect(fx.server.server.app.agent.clientTools.waitingCount()).toBe(0);
    const late = await rpcError(provider.tool.result({ conversationId: id, toolCallId: "call_pick", output: "x" }));
    expect(late.code).toBe(NOT_PENDING);
    fx.fake.reset();
  });

  it("fails the call with a clear message when the registering connection closes and nobody takes it over within the grace period", async () => {
    const provider = await fx.connect({ clientInfo: { name: "editor" } });
    const { events, generationId } = await startCall(fx, provider);
    await provider.close();
    const failed = (await events.waitForMethod("tool_failed")).params as NotificationParams<"tool_failed">;
    expect(failed.record.result).toContain('the client that provided tool "pick_color" disconnected');
    await events.waitForEnd(generationId);
    expect(fx.fake.messagesOf(1).find((m) => m.role === "tool").content).toContain("disconnected");
  });

  it("hands the call to a new connection of the same client that registers the tool again", async () => {
    const first = await fx.connect({ clientInfo: { name: "editor" } });
    const { id, events, generationId } = await startCall(fx, first);
    await first.close();
    const second = await fx.connect({ clientInfo: { name: "editor" } });
    const taken = callsOf(second).next();
    await second.tools.register({ conversationId: id, tools: [PICK] });
    expect(await taken).toMatchObject({ toolCallId: "call_pick", name: "pick_color", arguments: { hint: "warm" } });
    expect(await second.tool.result({ conversationId: id, toolCallId: "call_pick", output: "teal" })).toEqual({ status: "completed" });
    await events.waitForEnd(generationId);
    expect(events.of("tool_completed")[0]!.record.result).toBe("teal");
  });
});
