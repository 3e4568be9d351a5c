/**
 * The Claude runtime (config `runtimes`, src/runtimes/claude-runtime.ts)
 * through what ships: the bundled CLI serves, the real Claude Code binary
 * (from the optional @anthropic-ai/claude-agent-sdk package in the
 * repository's runtimes cache, driven by that package's query()) runs the
 * agent, and its model calls go to the fake's Anthropic Messages endpoint
 * (ANTHROPIC_BASE_URL, its own CLAUDE_CONFIG_DIR) — no network. An ordinary
 * conversation runs beside the Claude ones on the same server and fake.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { CLAUDE_PACKAGE } from "../../src/runtimes/claude-runtime.js";
import { startFakeOpenAI, type FakeChatBody, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { REPO_ROOT } from "../harness/cli-process.js";
import { rpcError } from "../harness/rpc-errors.js";
import { useShippedCli } from "../harness/shipped-cli.js";
import { runtimePackages } from "../harness/runtime-cache.js";
import { expectInstallPinned, expectInterruptKeepsPartial, expectOrdinaryStep, expectRefusals } from "./runtime-harness.js";

const packages = runtimePackages();
if (!packages.ok) console.warn(`claude-runtime.test.ts: ${packages.why}`);

/** The model requests the fake answered (Claude Code may send one the fake refuses first; those are in fake.rejected). */
function answered(fake: FakeOpenAI): FakeChatBody[] {
  return fake.exchanges.map((exchange) => exchange.body);
}

/** The tool_result blocks a Messages request carries. */
function toolResults(body: FakeChatBody): any[] {
  return body.messages.flatMap((message: any) => (Array.isArray(message.content) ? message.content.filter((block: any) => block.type === "tool_result") : []));
}

describe.skipIf(!packages.ok)("the Claude runtime", () => {
  const shipped = useShippedCli();
  let fake: FakeOpenAI;
  let root: string;
  let workspace: string;
  let client: AgentwireClient;
  let claudeHome: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: "claude-key" });
    root = await mkdtemp(join(tmpdir(), "agentwire-claude-"));
    workspace = await mkdtemp(join(root, "workspace-"));
    claudeHome = await mkdtemp(join(root, "claude-home-"));
    const config = join(root, "agentwire.json");
    await writeFile(
      config,
      JSON.stringify({
        runtimes: {
          claude: { runtime: "claude", packageDir: packages.ok ? packages.dir : "", home: claudeHome, baseUrl: fake.url, apiKeyEnv: "FAKE_CLAUDE_KEY" },
          "claude-unasked": { runtime: "claude", packageDir: packages.ok ? packages.dir : "", home: claudeHome, baseUrl: fake.url, apiKeyEnv: "FAKE_CLAUDE_KEY", approvalPolicy: "never" },
          missing: { runtime: "claude", packageDir: join(root, "no-runtimes-here") },
        },
      }),
    );
    const cli = shipped(
      ["serve", "--port", "0", "--data-dir", join(root, "data"), "--config", config, "--log-level", "warn"],
      { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "claude-key", AGENTWIRE_MODEL: "fake-model", FAKE_CLAUDE_KEY: "claude-key", HOME: root },
      REPO_ROOT,
    );
    client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket });
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await fake?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });
  beforeEach(() => fake.reset());

  it("installs the package version the runtime was written against", () => expectInstallPinned(CLAUDE_PACKAGE));

  it("streams a reply from the Messages endpoint, stored as ordinary records, and resumes the session on the next step", async () => {
    fake.enqueue({ kind: "reply", text: ["Hello", " from", " Claude."] });
    const { id, events } = await newConversation(client, { model: "claude/fake-claude", workspace, system: "Be brief." }, "say hello");
    const { generationId } = await client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    expect(events.of("generation_progress").map((p) => p.delta).join("")).toBe("Hello from Claude.");
    // Through Claude Code (its own system prompt and tools, the key as the API takes it), carrying the conversation's system prompt and the user's text.
    const first = answered(fake)[0]!;
    expect(first.model).toBe("fake-claude");
    expect(JSON.stringify(first.messages)).toContain("say hello");
    expect(JSON.stringify(first.system)).toContain("Be brief.");
    expect((first.tools ?? []).map((tool: any) => tool.name)).toContain("Bash");
    const got = await client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.records!.map((r) => (r.type === "message" ? `${r.role}: ${r.content}` : r.type))).toEqual(["user: say hello", "assistant: Hello from Claude."]);
    const session = got.conversation.runtimeSession;
    expect(session).toEqual({ runtime: "claude", sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    // The next step resumes the same session: Claude Code sends the earlier turn back itself.
    fake.enqueue({ kind: "reply", text: ["Again."] });
    await client.message.append({ conversationId: id, role: "user", content: "once more" });
    const second = await client.step({ conversationId: id });
    expect((await events.waitForEnd(second.generationId, 20_000)).method).toBe("generation_complete");
    const resumed = JSON.stringify(answered(fake).at(-1)!.messages);
    expect(resumed).toContain("Hello from Claude.");
    expect(resumed).toContain("once more");
    expect((await client.conversation.get({ conversationId: id })).conversation.runtimeSession).toEqual(session);
  }, 40_000);

  it("starts the session anew under the same id when Claude Code no longer has its transcript", async () => {
    fake.enqueue({ kind: "reply", text: ["First."] });
    const { id, events } = await newConversation(client, { model: "claude/fake-claude", workspace }, "remember this");
    const first = await client.step({ conversationId: id });
    expect((await events.waitForEnd(first.generationId, 20_000)).method).toBe("generation_complete");
    const session = (await client.conversation.get({ conversationId: id })).conversation.runtimeSession;
    // Claude's transcripts gone (a cleared or moved home): resuming finds nothing.
    await rm(join(claudeHome, "projects"), { recursive: true, force: true });

    fake.enqueue({ kind: "reply", text: ["Fresh."] });
    await client.message.append({ conversationId: id, role: "user", content: "and now?" });
    const second = await client.step({ conversationId: id });
    expect((await events.waitForEnd(second.generationId, 20_000)).method).toBe("generation_complete");
    expect(JSON.stringify(answered(fake).at(-1)!.messages)).not.toContain("First.");
    expect((await client.conversation.get({ conversationId: id })).conversation.runtimeSession).toEqual(session);
  }, 30_000);

  it("streams Claude's thinking as reasoning, stored as a reasoning record, with settings.reasoning sent as its effort", async () => {
    fake.enqueue({ kind: "reply", reasoning: ["Let me", " think."], text: ["Thought."] });
    const { id, events } = await newConversation(client, { model: "claude/fake-claude", workspace, settings: { reasoning: "low" } }, "think first");
    const { generationId } = await client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    const progress = events.of("generation_progress");
    expect(progress.filter((p) => p.kind === "reasoning").map((p) => p.delta).join("")).toBe("Let me think.");
    expect(progress.filter((p) => p.kind === "text").map((p) => p.delta).join("")).toBe("Thought.");
    const records = (await client.conversation.get({ conversationId: id, includeRecords: true })).records!;
    expect(records.map((r) => r.type)).toEqual(["message", "reasoning", "message"]);
    expect(records[1]).toMatchObject({ content: "Let me think." });
    expect(answered(fake)[0]!.output_config).toMatchObject({ effort: "low" });
  }, 30_000);

  it("offers Claude's permission question as tool_pending, runs the command on tool.confirm, and the model sees its tool_result — beside an ordinary conversation", async () => {
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "toolu_touch", name: "Bash", args: JSON.stringify({ command: "touch made-by-claude.txt", description: "Make a file" }) }] });
    const { id, events } = await newConversation(client, { model: "claude/fake-claude", workspace }, "make a file");
    const { generationId } = await client.step({ conversationId: id });
    const pending = (await events.waitForMethod("tool_pending", 20_000)).params;
    expect(pending).toMatchObject({ generationId, toolCallId: "toolu_touch", toolName: "Bash", autoConfirmed: false, rememberAs: { tool: "Bash" } });
    expect(pending.arguments.command).toBe("touch made-by-claude.txt");

    // While Claude waits, an ordinary conversation runs beside it.
    await expectOrdinaryStep(client, fake);
    expect(existsSync(join(workspace, "made-by-claude.txt"))).toBe(false);

    fake.enqueue({ kind: "reply", text: ["Made it."] });
    await client.tool.confirm({ conversationId: id, toolCallId: "toolu_touch", action: "confirm" });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    expect(existsSync(join(workspace, "made-by-claude.txt"))).toBe(true);
    expect(toolResults(answered(fake).at(-1)!)).toEqual([expect.objectContaining({ tool_use_id: "toolu_touch" })]);
    expect(events.methods().filter((m) => m.startsWith("tool_"))).toEqual(["tool_pending", "tool_executing", "tool_completed"]);
    const records = (await client.conversation.get({ conversationId: id, includeRecords: true })).records!;
    expect(records.map((r) => r.type)).toEqual(["message", "tool_call", "message"]);
    expect(records[1]).toMatchObject({ toolCallId: "toolu_touch", toolName: "Bash", status: "completed", success: true, runBy: "runtime" });
    expect(records[2]).toMatchObject({ role: "assistant", content: "Made it." });
  }, 40_000);

  it("with approvalPolicy never, mirrors the calls Claude runs without asking, read-only", async () => {
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "toolu_free", name: "Bash", args: JSON.stringify({ command: "touch unasked.txt" }) }] }, { kind: "reply", text: ["Done."] });
    const { id, events } = await newConversation(client, { model: "claude-unasked/fake-claude", workspace }, "just do it");
    const { generationId } = await client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    expect(existsSync(join(workspace, "unasked.txt"))).toBe(true);
    expect(events.methods().filter((m) => m.startsWith("tool_"))).toEqual(["tool_executing", "tool_completed"]);
    const records = (await client.conversation.get({ conversationId: id, includeRecords: true })).records!;
    expect(records[1]).toMatchObject({ toolCallId: "toolu_free", toolName: "Bash", arguments: { command: "touch unasked.txt" }, status: "completed", runBy: "runtime" });
    const late = await rpcError(client.tool.confirm({ conversationId: id, toolCallId: "toolu_free", action: "skip" }));
    expect(late.message).toContain("toolu_free");
  }, 30_000);

  it("runs the edited input on tool.confirm edit, and tells the model a skipped call was declined", async () => {
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "toolu_edit", name: "Bash", args: JSON.stringify({ command: "touch proposed.txt" }) }] });
    const { id, events } = await newConversation(client, { model: "claude/fake-claude", workspace }, "make another file");
    const first = await client.step({ conversationId: id });
    await events.waitForMethod("tool_pending", 20_000);
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "toolu_skip", name: "Bash", args: JSON.stringify({ command: "touch skipped.txt" }) }] });
    await client.tool.confirm({ conversationId: id, toolCallId: "toolu_edit", action: "edit", arguments: { command: "touch edited.txt" } });
    await events.waitFor((e) => e.method === "tool_pending" && (e.params as { toolCallId: string }).toolCallId === "toolu_skip", 20_000);
    expect(existsSync(join(workspace, "edited.txt"))).toBe(true);
    expect(existsSync(join(workspace, "proposed.txt"))).toBe(false);
    expect(events.of("tool_executing")[0]).toMatchObject({ toolCallId: "toolu_edit", edited: true, arguments: { command: "touch edited.txt" } });

    fake.enqueue({ kind: "reply", text: ["Understood."] });
    await client.tool.confirm({ conversationId: id, toolCallId: "toolu_skip", action: "skip", message: "not that one" });
    expect((await events.waitForEnd(first.generationId, 20_000)).method).toBe("generation_complete");
    expect(existsSync(join(workspace, "skipped.txt"))).toBe(false);
    const declined = toolResults(answered(fake).at(-1)!).find((block) => block.tool_use_id === "toolu_skip");
    expect(declined).toMatchObject({ is_error: true });
    expect(JSON.stringify(declined.content)).toContain("not that one");
    const records = (await client.conversation.get({ conversationId: id, includeRecords: true })).records!;
    expect(records.filter((r) => r.type === "tool_call").map((r) => [r.toolCallId, r.status])).toEqual([
      ["toolu_edit", "completed"],
      ["toolu_skip", "skipped"],
    ]);
  }, 40_000);

  it("counts each model call's usage (usage_updated), carries its TodoWrite list as the plan, and refuses what the conversation's mode does not offer", async () => {
    const todos = [
      { content: "Read the code", status: "in_progress", activeForm: "Reading the code" },
      { content: "Fix it", status: "pending", activeForm: "Fixing it" },
    ];
    fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "toolu_todo", name: "TodoWrite", args: JSON.stringify({ todos }) }], usage: { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 } },
      { kind: "reply", toolCalls: [{ id: "toolu_write", name: "Bash", args: JSON.stringify({ command: "touch read-only-mode.txt" }) }] },
      { kind: "reply", text: ["Not in this mode."] },
    );
    // ask mode is read-only: Claude's question about Bash is answered no without asking.
    const { id, events } = await newConversation(client, { model: "claude/fake-claude", workspace, settings: { mode: "ask" } }, "plan, then make a file");
    const { generationId } = await client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    expect(events.of("plan_updated")).toEqual([
      expect.objectContaining({
        generationId,
        entries: [
          { content: "Read the code", status: "in_progress" },
          { content: "Fix it", status: "pending" },
        ],
      }),
    ]);
    const got = await client.conversation.get({ conversationId: id });
    expect(got.state.plan?.entries).toHaveLength(2);
    expect(events.of("tool_pending")).toEqual([]);
    const refused = events.of("tool_failed").find((p) => p.record.toolCallId === "toolu_write")!;
    expect(refused.record).toMatchObject({ toolName: "Bash", status: "failed", runBy: "runtime" });
    expect(refused.record.result).toContain("ask mode");
    expect(existsSync(join(workspace, "read-only-mode.txt"))).toBe(false);
    const denied = toolResults(answered(fake).at(-1)!).find((block) => block.tool_use_id === "toolu_write");
    expect(JSON.stringify(denied)).toContain("ask mode");
    // One usage_updated per model call, each the call's own tokens; the conversation's totals add them up.
    const usage = events.of("usage_updated");
    expect(usage).toHaveLength(answered(fake).length);
    expect(usage[0]).toMatchObject({ generationId, model: "claude/fake-claude", last: { promptTokens: 200, completionTokens: 20, totalTokens: 220 }, cost: null });
    expect(got.conversation.usage).toMatchObject({ modelCalls: usage.length, promptTokens: usage.reduce((n, u) => n + u.last!.promptTokens, 0) });
    expect(usage.at(-1)!.conversation).toEqual(got.conversation.usage);
  }, 30_000);

  it("runs a call a remembered approval (settings.approvalRules) matches without asking", async () => {
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "toolu_ruled", name: "Bash", args: JSON.stringify({ command: "touch ruled.txt" }) }] }, { kind: "reply", text: ["Done."] });
    const { id, events } = await newConversation(client, { model: "claude/fake-claude", workspace, settings: { approvalRules: [{ tool: "Bash" }] } }, "make it");
    const { generationId } = await client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    expect(events.of("tool_pending")).toEqual([expect.objectContaining({ toolCallId: "toolu_ruled", autoConfirmed: true, autoReason: "rule" })]);
    expect(existsSync(join(workspace, "ruled.txt"))).toBe(true);
  }, 30_000);

  it("puts Claude's AskUserQuestion to the user as input_requested, and the model gets the answer given by input.respond", async () => {
    const questions = [{ question: "Which color?", header: "Color", multiSelect: false, options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] }];
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "toolu_ask", name: "AskUserQuestion", args: JSON.stringify({ questions }) }] });
    const { id, events } = await newConversation(client, { model: "claude/fake-claude", workspace }, "ask me");
    const { generationId } = await client.step({ conversationId: id });
    const asked = (await events.waitForMethod("input_requested", 20_000)).params;
    expect(asked).toMatchObject({ generationId, toolCallId: "toolu_ask", source: "ask_user", question: "Color: Which color?", choices: ["Red", "Blue"] });
    fake.enqueue({ kind: "reply", text: ["Blue it is."] });
    expect(await client.input.respond({ conversationId: id, requestId: asked.requestId, answer: "Blue" })).toEqual({ outcome: "answered" });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    const result = toolResults(answered(fake).at(-1)!).find((block) => block.tool_use_id === "toolu_ask");
    expect(result?.is_error).not.toBe(true);
    expect(JSON.stringify(result?.content)).toContain("Blue");
    expect(events.of("tool_pending")).toEqual([]);
  }, 30_000);

  it("stops a turn on interrupt with the partial text kept, and the session goes on afterwards", () => expectInterruptKeepsPartial(client, fake, "claude/fake-claude", workspace, 2500), 40_000);

  it("refuses what the runtime cannot do, and a runtime whose package is missing names the install command", () =>
    expectRefusals(client, fake, { model: "claude/fake-claude", workspace, missingModel: "missing/claude-sonnet-5", missingDir: join(root, "no-runtimes-here"), pkg: CLAUDE_PACKAGE }));
});
