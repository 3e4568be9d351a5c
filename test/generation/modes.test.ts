/**
 * Modes (settings.mode): what each built-in one offers the model, checked in
 * the request the fake endpoint receives on both wires; a switch applies
 * from the next model call; unknown names are refused naming the field;
 * `auto` runs calls without asking; a conversation without a mode sends
 * exactly what one in `code` mode sends.
 */
import { describe, expect, it } from "vitest";
import { BUILT_IN_MODES } from "../../protocol/index.js";
import type { FakeChatBody } from "../fake-openai/server.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

/** Tool names of a request, on either wire (chat nests them under `function`). */
const offered = (request: FakeChatBody) => (request.tools ?? []).map((t: any) => t.function?.name ?? t.name).sort();
const WRITING = ["shell", "write_file", "edit_file"];

for (const wire of ["chat", "responses"] as const) {
  describe(`modes on the ${wire} wire`, () => {
    const fx = useAgentFixture({ wire });

    /** Step once with a plain answer; returns the request the fake received. */
    async function requestIn(create: Parameters<typeof fx.client.conversation.create>[0]): Promise<{ body: FakeChatBody; system: string }> {
      fx.fake.enqueue({ kind: "reply", text: ["ok"] });
      const { id, events } = await newConversation(fx.client, create);
      const { generationId } = await fx.client.step({ conversationId: id });
      expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
      const at = fx.fake.requests.length - 1;
      const system = fx.fake.messagesOf(at).find((m: { role: string }) => m.role === "system")?.content ?? "";
      return { body: fx.fake.requests[at]!, system };
    }

    it("plan offers read-only tools and update_plan, no writing tool, and appends its prompt", async () => {
      const { tools } = await fx.client.tools.list();
      const readOnly = tools.filter((t) => t.annotations.readOnlyHint === true).map((t) => t.name);
      const { body, system } = await requestIn({ settings: { mode: "plan" } });
      const names = offered(body);
      expect(names).toContain("update_plan");
      expect(names).toContain("read_file");
      for (const name of WRITING) expect(names).not.toContain(name);
      expect(names.every((n) => readOnly.includes(n))).toBe(true);
      expect(system.endsWith(`\n\n${BUILT_IN_MODES.plan!.prompt}`)).toBe(true);
    });

    it("ask offers read-only tools only (not even update_plan) and appends its prompt", async () => {
      const { body, system } = await requestIn({ settings: { mode: "ask" } });
      const names = offered(body);
      expect(names).toContain("read_file");
      for (const name of [...WRITING, "update_plan"]) expect(names).not.toContain(name);
      expect(system).toContain(BUILT_IN_MODES.ask!.prompt!);
    });

    it("a conversation without a mode sends exactly what one in code mode sends", async () => {
      const plain = await requestIn({});
      const code = await requestIn({ settings: { mode: "code" } });
      const { tools: all } = await fx.client.tools.list();
      expect(offered(plain.body)).toEqual(all.map((t) => t.name).sort());
      const comparable = (b: FakeChatBody) => JSON.stringify({ ...b, metadata: undefined });
      expect(comparable(code.body)).toBe(comparable(plain.body));
    });
  });
}

describe("switching modes", () => {
  const fx = useAgentFixture();

  it("conversation.update { mode } applies from the next model call of the running step, and conversation_updated says so", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "c1", name: "list_files", args: "{}" }] }, { kind: "reply", text: ["done"] });
    const { id, events } = await newConversation(fx.client);
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    const updated = await fx.client.conversation.update({ conversationId: id, mode: "plan" });
    expect(updated.settings.mode).toBe("plan");
    expect(events.of("conversation_updated").at(-1)!.conversation.settings.mode).toBe("plan");
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "c1", action: "confirm" });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    expect(offered(fx.fake.requests[0]!)).toContain("write_file");
    expect(offered(fx.fake.requests[1]!)).not.toContain("write_file");
    expect(offered(fx.fake.requests[1]!)).toContain("update_plan");
    // settings.mode is the same switch; back to code offers everything again.
    await fx.client.conversation.update({ conversationId: id, settings: { mode: "code" } });
    expect((await fx.client.conversation.get({ conversationId: id })).conversation.settings.mode).toBe("code");
  });

  it("a call to a tool the mode does not offer fails at once without running", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "w1", name: "write_file", args: JSON.stringify({ path: "x.txt", content: "x" }) }] }, { kind: "reply", text: ["ok"] });
    const { id, events } = await newConversation(fx.client, { settings: { mode: "ask" } });
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForEnd(generationId);
    expect(events.of("tool_pending")).toEqual([]);
    const failed = events.of("tool_failed")[0]!.record;
    expect(failed).toMatchObject({ toolName: "write_file", status: "failed" });
    expect(failed.result).toContain("not available in ask mode");
  });

  it("auto runs a call without waiting for tool.confirm", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "s1", name: "shell", args: JSON.stringify({ command: "echo hi" }) }] }, { kind: "reply", text: ["ok"] });
    const { id, events } = await newConversation(fx.client, { settings: { mode: "auto" } });
    const { generationId } = await fx.client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    expect(events.of("tool_pending")[0]).toMatchObject({ toolName: "shell", autoConfirmed: true, autoReason: "policy" });
    expect(events.of("tool_completed")[0]!.record.result).toContain("hi");
  });

  it("an unknown mode is refused naming the field and listing the valid ones; nothing changes", async () => {
    const conversation = await fx.client.conversation.create({});
    const refused = (promise: Promise<unknown>) => promise.then(() => undefined, (e: { code: number; message: string }) => e);
    const update = await refused(fx.client.conversation.update({ conversationId: conversation.id, mode: "nope" }));
    expect(update).toMatchObject({ code: -32602 });
    expect(update!.message).toMatch(/\bmode\b.*unknown mode "nope" \(valid: ask, plan, code, auto/);
    const viaSettings = await refused(fx.client.conversation.update({ conversationId: conversation.id, settings: { mode: "nope" } }));
    expect(viaSettings!.message).toContain("settings.mode");
    const create = await refused(fx.client.conversation.create({ settings: { mode: "nope" } }));
    expect(create).toMatchObject({ code: -32602 });
    expect(create!.message).toContain("settings.mode");
    const both = await refused(fx.client.conversation.update({ conversationId: conversation.id, mode: "ask", settings: { mode: "plan" } }));
    expect(both!.message).toContain("mode");
    expect((await fx.client.conversation.get({ conversationId: conversation.id })).conversation.settings.mode).toBeUndefined();
  });

  it("modes.list describes the built-in modes and the default", async () => {
    const { modes, default: fallback } = await fx.client.modes.list({});
    expect(fallback).toBe("code");
    expect(modes.map((m) => m.id)).toEqual(["ask", "plan", "code", "auto"]);
    expect(modes.find((m) => m.id === "auto")).toMatchObject({ approval: "auto", tools: "all", builtIn: true });
    expect(modes.find((m) => m.id === "code")).toMatchObject({ approval: null, prompt: "", tools: "all", model: null });
  });
});
