/**
 * The agent loop end to end: a real server, the real openai SDK, the fake
 * OpenAI-compatible server (which rejects any request the real API would),
 * clients over in-memory links — on every wire: Chat Completions, the
 * Responses API and Anthropic's Messages API (what the model was shown is
 * read back as chat messages, `fake.messagesOf`, so one assertion serves all).
 */
import { describe, expect, it } from "vitest";
import type { AgentwireRpcError } from "../../clients/typescript/index.js";
import { newConversation, startAgentFixture, TOOL_ROUND_FLOW, useAgentFixture } from "../harness/agent-fixture.js";
import { rpcError } from "../harness/rpc-errors.js";

describe.each(["chat", "responses", "anthropic"] as const)("on the %s wire", (wire) => {
  const fx = useAgentFixture({ wire });

  describe("a plain answer", () => {
    it("streams text and reasoning, stores a reasoning record and one assistant record, ends with a final generation_complete", async () => {
      fx.fake.enqueue({ kind: "reply", reasoning: ["Let me", " think."], text: ["Hel", "lo", "!"] });
      const { id, events } = await newConversation(fx.client, { system: "Be brief." });
      const { generationId } = await fx.client.step({ conversationId: id });
      const end = await events.waitForEnd(generationId);
      expect(end.method).toBe("generation_complete");
      expect(end.params).toMatchObject({ final: true, finishReason: "stop", iteration: 1 });
      expect(end.params.usage).toMatchObject({ promptTokens: expect.any(Number), completionTokens: expect.any(Number) });
      expect(events.flow()).toEqual([
        "message_added",
        "generation_started",
        "generation_progress",
        "reasoning_added",
        "message_added",
        "usage_updated",
        "generation_complete",
      ]);
      const progress = events.events.filter((e) => e.method === "generation_progress").map((e) => e.params);
      expect(progress.filter((p) => p.kind === "reasoning").map((p) => p.delta).join("")).toBe("Let me think.");
      expect(progress.filter((p) => p.kind === "text").map((p) => p.delta).join("")).toBe("Hello!");

      const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(records).toHaveLength(3);
      // The thinking is a record of its own, right before the reply it is the thinking of.
      expect(records![1]).toMatchObject({ type: "reasoning", content: "Let me think.", generationId });
      expect(records![2]).toMatchObject({ type: "message", role: "assistant", content: "Hello!", generationId });
      expect(records![2]).not.toHaveProperty("reasoning");
      // The request went out on this wire.
      expect(fx.fake.wires).toEqual([wire]);
      // The model saw the system prompt first, then the user message.
      expect(fx.fake.messagesOf(0).slice(0, 2)).toEqual([
        { role: "system", content: "Be brief." },
        { role: "user", content: "hello" },
      ]);
      // Seqs strictly increase across the whole flow.
      const seqs = events.events.map((e) => e.params.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
    });

    it("answers step with MODEL_NOT_CONFIGURED when no model is known anywhere", async () => {
      const bare = await startAgentFixture({ wire, config: { model: undefined } });
      try {
        const { id } = await newConversation(bare.client);
        const error = await rpcError(bare.client.step({ conversationId: id }));
        expect(error.code).toBe(-32031);
        // A model given on the step itself is enough.
        const { generationId } = await bare.client.step({ conversationId: id, model: "m-on-step" });
        expect(generationId).toMatch(/^g_/);
      } finally {
        await bare.close();
      }
    });
  });

  describe("tool round trips", () => {
    const shellCall = (command: string, id = "call_1") => ({ id, name: "shell", args: JSON.stringify({ command }) });

    it("confirm: pending → executing → output → completed → the model sees the result", async () => {
      fx.fake.enqueue(
        { kind: "reply", text: ["Running it."], toolCalls: [shellCall("echo hi-there")] },
        { kind: "reply", text: ["Done."] },
      );
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      const pending = await events.waitForMethod("tool_pending");
      expect(pending.params).toMatchObject({ toolCallId: "call_1", toolName: "shell", arguments: { command: "echo hi-there" }, autoConfirmed: false });
      const state = await fx.client.conversation.get({ conversationId: id });
      expect(state.state.pendingTools).toEqual([
        { toolCallId: "call_1", toolName: "shell", arguments: { command: "echo hi-there" }, kind: "execute", title: "Run echo hi-there", locations: [], rememberAs: { tool: "shell", prefix: "echo" } },
      ]);

      const result = await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "confirm" });
      expect(result.status).toBe("executing");
      await events.waitForEnd(generationId);
      expect(events.flow()).toEqual([
        "message_added",
        "generation_started",
        "generation_progress",
        "message_added",
        "usage_updated",
        "generation_complete",
        ...TOOL_ROUND_FLOW,
      ]);
      const completed = events.events.find((e) => e.method === "tool_completed")!.params.record;
      expect(completed).toMatchObject({ status: "completed", success: true, exitCode: 0 });
      expect(completed.result).toContain("hi-there");
      const second = fx.fake.messagesOf(1);
      expect(second.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ id: "call_1", function: { name: "shell" } }] });
      expect(second.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_1" });
      expect(second.at(-1).content).toContain("hi-there");
    });

    it("edit: invalid arguments are refused naming the field and the call stays pending; valid ones run and are recorded", async () => {
      fx.fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo original")] }, { kind: "reply", text: ["ok"] });
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitForMethod("tool_pending");
      const bad = await rpcError(
        fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "edit", arguments: { command: 42 } }),
      );
      expect(bad.code).toBe(-32602);
      expect(JSON.stringify(bad.data)).toContain("arguments.command");
      expect((await fx.client.conversation.get({ conversationId: id })).state.pendingTools).toHaveLength(1);

      await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "edit", arguments: { command: "echo edited" } });
      await events.waitForEnd(generationId);
      const executing = events.events.find((e) => e.method === "tool_executing")!.params;
      expect(executing).toMatchObject({ arguments: { command: "echo edited" }, edited: true });
      const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      const tool = records!.find((r) => r.type === "tool_call")!;
      expect(tool).toMatchObject({
        arguments: { command: "echo edited" },
        originalArguments: { command: "echo original" },
        edited: true,
        status: "completed",
      });
      expect(tool.type === "tool_call" && tool.result).toContain("edited");
      // The model is told what really ran.
      expect(fx.fake.messagesOf(1).at(-2).tool_calls[0].function.arguments).toBe(JSON.stringify({ command: "echo edited" }));
    });

    it("skip: stored as skipped, and the model is told the user declined", async () => {
      fx.fake.enqueue({ kind: "reply", toolCalls: [shellCall("rm -rf /tmp/nothing-here")] }, { kind: "reply", text: ["fine"] });
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitForMethod("tool_pending");
      const result = await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_1", action: "skip" });
      expect(result.status).toBe("skipped");
      await events.waitForEnd(generationId);
      const skipped = events.events.find((e) => e.method === "tool_skipped")!.params;
      expect(skipped.reason).toBe("user");
      expect(skipped.record).toMatchObject({ status: "skipped", success: false });
      expect(events.methods()).not.toContain("tool_executing");
      expect(fx.fake.messagesOf(1).at(-1).content).toMatch(/declined/i);
    });

    it("several tool calls in one message are offered together and run in order", async () => {
      fx.fake.enqueue(
        { kind: "reply", toolCalls: [shellCall("echo one", "call_a"), shellCall("echo two", "call_b")] },
        { kind: "reply", text: ["both done"] },
      );
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === "call_b");
      // Both are pending before either is decided.
      expect((await fx.client.conversation.get({ conversationId: id })).state.pendingTools.map((t) => t.toolCallId)).toEqual(["call_a", "call_b"]);
      // Deciding the second first does not make it run first.
      await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_b", action: "confirm" });
      await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_a", action: "confirm" });
      await events.waitForEnd(generationId);
      const ran = events.events.filter((e) => e.method === "tool_executing").map((e) => e.params.toolCallId);
      expect(ran).toEqual(["call_a", "call_b"]);
      const toolMessages = fx.fake.messagesOf(1).filter((m: any) => m.role === "tool").map((m: any) => m.tool_call_id);
      expect(toolMessages).toEqual(["call_a", "call_b"]);
    });

    it("auto with count confirms this call and the next N tool uses of the conversation, across steps", async () => {
      fx.fake.enqueue(
        { kind: "reply", toolCalls: [shellCall("echo 1", "c1"), shellCall("echo 2", "c2")] },
        { kind: "reply", text: ["step one done"] },
        { kind: "reply", toolCalls: [shellCall("echo 3", "c3")] },
        { kind: "reply", text: ["step two done"] },
        { kind: "reply", toolCalls: [shellCall("echo 4", "c4")] },
        { kind: "reply", text: ["step three done"] },
      );
      const { id, events } = await newConversation(fx.client);
      const first = await fx.client.step({ conversationId: id });
      await events.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === "c2");
      const auto = await fx.client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "auto", count: 2 });
      // c2 was offered together with c1 and uses one unit of the budget.
      expect(auto.autoConfirmRemaining).toBe(1);
      await events.waitForEnd(first.generationId);
      expect(events.events.filter((e) => e.method === "tool_completed")).toHaveLength(2);

      const second = await fx.client.step({ conversationId: id });
      await events.waitForEnd(second.generationId);
      const c3 = events.events.find((e) => e.method === "tool_pending" && e.params.toolCallId === "c3")!;
      expect(c3.params.autoConfirmed).toBe(true);
      expect((await fx.client.conversation.get({ conversationId: id })).state.autoConfirmRemaining).toBe(0);

      const third = await fx.client.step({ conversationId: id });
      const c4 = await events.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === "c4");
      expect(c4.params.autoConfirmed).toBe(false);
      await fx.client.interrupt({ conversationId: id });
      await events.waitForEnd(third.generationId);
    });

    it("step autoConfirm: true runs every tool of the step; a number runs that many, then asks", async () => {
      fx.fake.enqueue(
        { kind: "reply", toolCalls: [shellCall("echo a", "x1"), shellCall("echo b", "x2")] },
        { kind: "reply", text: ["ok"] },
      );
      const { id, events } = await newConversation(fx.client);
      const all = await fx.client.step({ conversationId: id, autoConfirm: true });
      await events.waitForEnd(all.generationId);
      expect(events.events.filter((e) => e.method === "tool_completed")).toHaveLength(2);

      fx.fake.enqueue({ kind: "reply", toolCalls: [shellCall("echo c", "y1"), shellCall("echo d", "y2")] }, { kind: "reply", text: ["ok"] });
      const one = await fx.client.step({ conversationId: id, autoConfirm: 1 });
      const y2 = await events.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === "y2");
      expect(y2.params.autoConfirmed).toBe(false);
      await events.waitFor((e) => e.method === "tool_completed" && e.params.record.toolCallId === "y1");
      await fx.client.tool.confirm({ conversationId: id, toolCallId: "y2", action: "confirm" });
      await events.waitForEnd(one.generationId);
      // The step's budget does not outlive the step.
      expect((await fx.client.conversation.get({ conversationId: id })).state.autoConfirmRemaining).toBe(0);
    });

    it("maxIterations: stops after N model calls with a stored notice; the last calls are skipped, never run", async () => {
      const loop = (n: number) => ({ kind: "reply" as const, toolCalls: [shellCall("echo again", `loop_${n}`)] });
      fx.fake.enqueue(loop(1), loop(2));
      const { id, events } = await newConversation(fx.client, { settings: { maxIterations: 2 } });
      const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
      const end = await events.waitForEnd(generationId);
      expect(end.params).toMatchObject({ final: true, iteration: 2 });
      expect(fx.fake.requests).toHaveLength(2);
      expect(events.events.filter((e) => e.method === "tool_completed")).toHaveLength(1);
      const skipped = events.events.find((e) => e.method === "tool_skipped")!;
      expect(skipped.params.reason).toBe("max_iterations");
      const notice = events.events.find((e) => e.method === "message_added" && e.params.record.notice);
      expect(notice!.params.record).toMatchObject({ notice: "max_iterations" });
      // The notice is for people: the next model call does not see it, and the history stays valid.
      fx.fake.enqueue({ kind: "reply", text: ["resumed"] });
      const next = await fx.client.step({ conversationId: id });
      await events.waitForEnd(next.generationId);
      expect(JSON.stringify(fx.fake.messagesOf(2))).not.toContain("Stopped after");
    });

    it("an unknown tool fails at once without asking, and the model is told", async () => {
      fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "u1", name: "teleport", args: "{}" }] }, { kind: "reply", text: ["sorry"] });
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitForEnd(generationId);
      expect(events.methods()).not.toContain("tool_pending");
      const failed = events.events.find((e) => e.method === "tool_failed")!.params.record;
      expect(failed.result).toContain("Unknown tool");
      expect(fx.fake.messagesOf(1).at(-1).content).toContain("Unknown tool");
    });

    it("arguments nested 100,000 deep fail that call (tool_failed naming the depth limit) and the generation goes on", async () => {
      const nested = (depth: number) => `{"command":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
      fx.fake.enqueue(
        {
          kind: "reply",
          toolCalls: [
            { id: "deep", name: "shell", args: nested(100_000) },
            // At the limit exactly: kept (and refused by the schema, as a list is no command).
            { id: "at-limit", name: "shell", args: nested(64) },
          ],
        },
        { kind: "reply", text: ["flattened"] },
      );
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
      const end = await events.waitForEnd(generationId);
      expect(end.method).toBe("generation_complete");
      expect(end.params.final).toBe(true);
      expect(events.methods()).not.toContain("error");
      const failed = events.events.filter((e) => e.method === "tool_failed").map((e) => e.params.record);
      expect(failed.map((r) => r.toolCallId)).toEqual(["deep", "at-limit"]);
      expect(failed[0]).toMatchObject({ status: "failed", success: false, arguments: {} });
      expect(failed[0].result).toBe(
        "arguments: nested deeper than 64 levels of arrays and objects (the limit for tool arguments); send flatter arguments",
      );
      expect(failed[1].result).toMatch(/^Invalid arguments:\ncommand: /);
      // The model is told, and the records are stored and readable.
      expect(fx.fake.messagesOf(1).find((m) => m.role === "tool" && m.tool_call_id === "deep").content).toContain("deeper than 64 levels");
      const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
      expect(records!.filter((r) => r.type === "tool_call").map((r) => r.type === "tool_call" && r.status)).toEqual(["failed", "failed"]);
      expect(records!.at(-1)).toMatchObject({ role: "assistant", content: "flattened" });
    });
  });

  describe("errors a client can cause", () => {
    it("a second step while one runs gets GENERATION_IN_PROGRESS", async () => {
      fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "w1", name: "shell", args: '{"command":"true"}' }] });
      const { id, events } = await newConversation(fx.client);
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitForMethod("tool_pending");
      const error = await rpcError(fx.client.step({ conversationId: id }));
      expect(error.code).toBe(-32020);
      expect(error.data).toMatchObject({ generationId });
      await fx.client.interrupt({ conversationId: id });
    });

    it("tool.confirm on an unknown call, a settled call, and two clients racing for one call", async () => {
      fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "r1", name: "shell", args: '{"command":"true"}' }] }, { kind: "reply", text: ["k"] });
      const { id, events } = await newConversation(fx.client);
      const other = await fx.connect();
      const theirs: string[] = [];
      other.on("tool_executing", (p) => theirs.push(p.toolCallId));
      await other.conversation.subscribe({ conversationId: id });
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitForMethod("tool_pending");

      expect((await rpcError(fx.client.tool.confirm({ conversationId: id, toolCallId: "nope", action: "confirm" }))).code).toBe(-32021);

      const outcomes = await Promise.allSettled([
        fx.client.tool.confirm({ conversationId: id, toolCallId: "r1", action: "confirm" }),
        other.tool.confirm({ conversationId: id, toolCallId: "r1", action: "skip" }),
      ]);
      const won = outcomes.filter((o) => o.status === "fulfilled");
      const lost = outcomes.filter((o) => o.status === "rejected") as PromiseRejectedResult[];
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0]!.reason as AgentwireRpcError).code).toBe(-32022);
      await events.waitForEnd(generationId);
      // Both clients learn the outcome: the winner's decision is what ran (or was skipped) for everyone.
      const ranForUs = events.events.some((e) => e.method === "tool_executing");
      expect(theirs.length === 1).toBe(ranForUs);

      const settled = await rpcError(fx.client.tool.confirm({ conversationId: id, toolCallId: "r1", action: "confirm" }));
      expect(settled.code).toBe(-32022);
      expect(settled.data).toMatchObject({ toolCallId: "r1" });
    });

    it("unknown conversation ids get CONVERSATION_NOT_FOUND from step, interrupt and tool.confirm", async () => {
      for (const call of [
        fx.client.step({ conversationId: "c_missing" }),
        fx.client.interrupt({ conversationId: "c_missing" }),
        fx.client.tool.confirm({ conversationId: "c_missing", toolCallId: "x", action: "confirm" }),
      ]) {
        expect((await rpcError(call)).code).toBe(-32010);
      }
    });

    it("tool.confirm refuses arguments without edit and count without auto, naming the field", async () => {
      const a = await rpcError(fx.client.request("tool.confirm", { conversationId: "c", toolCallId: "t", action: "confirm", arguments: {} }));
      expect(a.code).toBe(-32602);
      expect(a.message).toContain("arguments");
      const b = await rpcError(fx.client.request("tool.confirm", { conversationId: "c", toolCallId: "t", action: "skip", count: 3 }));
      expect(b.message).toContain("count");
    });
  });

  describe("tools.list and models.list", () => {
    it("lists the shell tool with its parameter schema", async () => {
      const { tools } = await fx.client.tools.list();
      const shell = tools.find((t) => t.name === "shell")!;
      expect(shell.description.length).toBeGreaterThan(10);
      expect(shell.parameters).toMatchObject({ type: "object", required: ["command"] });
    });

    it("lists the endpoint's models under the default provider, and reports an endpoint without models as an error status", async () => {
      fx.fake.setModels(["alpha", { id: "beta", ownedBy: "me" }]);
      const listed = await fx.client.models.list();
      expect(listed.models.map((m) => m.id)).toEqual(["default/alpha", "default/beta"]);
      // Anthropic's model list says no owner.
      const owner = wire === "anthropic" ? {} : { ownedBy: "me" };
      expect(listed.models[1]).toMatchObject({ provider: "default", modelId: "beta", ...owner, listed: true, declared: false, capabilities: null });
      expect(listed.defaultModel).toBe("fake-model");
      expect(listed.providers).toEqual([expect.objectContaining({ name: "default", status: "ok" })]);
      fx.fake.setModels(null);
      const missing = await fx.client.models.list();
      expect(missing.models).toEqual([]);
      expect(missing.providers[0]).toMatchObject({ name: "default", status: "error", httpStatus: 404 });
      fx.fake.setModels([]);
      expect((await fx.client.models.list()).providers[0]).toMatchObject({ status: "error", error: expect.stringContaining("lists no models") });
    });
  });
});
