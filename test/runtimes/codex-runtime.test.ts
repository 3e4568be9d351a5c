/**
 * The Codex runtime (config `runtimes`, src/runtimes/codex-runtime.ts) through
 * what ships: the bundled CLI serves, the real `codex app-server` (from the
 * optional @openai/codex package in the repository's runtimes cache) runs the
 * agent, and its model calls go to the fake OpenAI server's Responses API,
 * configured on its command line with its own CODEX_HOME — no network. One
 * server, hence one Codex process, for the whole file; an ordinary
 * conversation runs beside the Codex ones on the same server and fake.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { CODEX_PACKAGE } from "../../src/runtimes/codex-runtime.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { killAllCli, REPO_ROOT } from "../harness/cli-process.js";
import { rpcError } from "../harness/rpc-errors.js";
import { useShippedCli } from "../harness/shipped-cli.js";
import { runtimePackages } from "../harness/runtime-cache.js";
import { expectInstallPinned, expectInterruptKeepsPartial, expectOrdinaryStep, expectRefusals } from "./runtime-harness.js";

const packages = runtimePackages();
if (!packages.ok) console.warn(`codex-runtime.test.ts: ${packages.why}`);

describe.skipIf(!packages.ok)("the Codex runtime", () => {
  const shipped = useShippedCli();
  let fake: FakeOpenAI;
  let root: string;
  let workspace: string;
  let client: AgentwireClient;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    root = await mkdtemp(join(tmpdir(), "agentwire-codex-"));
    workspace = await mkdtemp(join(root, "workspace-"));
    const codexHome = await mkdtemp(join(root, "codex-home-"));
    const config = join(root, "agentwire.json");
    await writeFile(
      config,
      JSON.stringify({
        runtimes: {
          codex: {
            runtime: "codex",
            packageDir: packages.ok ? packages.dir : "",
            home: codexHome,
            baseUrl: fake.url,
            apiKeyEnv: "FAKE_CODEX_KEY",
            // Full access: the test machine's sandbox (bubblewrap) is not what is tested; untrusted still asks before `touch`.
            sandbox: "danger-full-access",
          },
          missing: { runtime: "codex", packageDir: join(root, "no-runtimes-here") },
        },
      }),
    );
    const cli = shipped(
      ["serve", "--port", "0", "--data-dir", join(root, "data"), "--config", config, "--log-level", "warn"],
      { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model", FAKE_CODEX_KEY: "codex-key" },
      REPO_ROOT,
    );
    client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket });
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    // The server first (its Codex process ends with it: stdin closes), then what they wrote.
    await killAllCli();
    await fake?.close();
    if (root) await rm(root, { recursive: true, force: true, maxRetries: 5 });
  });
  beforeEach(() => fake.reset());

  it("installs the package version the runtime was written against", () => expectInstallPinned(CODEX_PACKAGE));

  it("streams a reply, stored as ordinary records, with the runtime's session kept for the next step", async () => {
    fake.enqueue({ kind: "reply", reasoning: ["Greeting", " the user."], text: ["Hello", " from", " Codex."] });
    const { id, events } = await newConversation(client, { model: "codex/fake-model", workspace, system: "Be brief." }, "say hello");
    const { generationId } = await client.step({ conversationId: id });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    const progress = (kind: string) => events.of("generation_progress").filter((p) => p.kind === kind).map((p) => p.delta).join("");
    expect(progress("text")).toBe("Hello from Codex.");
    expect(progress("reasoning")).toBe("Greeting the user.");
    // The request went through Codex (its own instructions, its tools), carrying the conversation's system prompt and the user's text.
    const sent = JSON.stringify(fake.requests[0]);
    expect(sent).toContain("say hello");
    expect(sent).toContain("Be brief.");
    expect(fake.requests[0]!.model).toBe("fake-model");
    const got = await client.conversation.get({ conversationId: id, includeRecords: true });
    expect(got.records!.map((r) => (r.type === "message" ? `${r.role}: ${r.content}` : `${r.type}: ${"content" in r ? r.content : ""}`))).toEqual([
      "user: say hello",
      "reasoning: Greeting the user.",
      "assistant: Hello from Codex.",
    ]);
    const session = got.conversation.runtimeSession;
    expect(session).toEqual({ runtime: "codex", sessionId: expect.any(String) });

    // A second step resumes the same Codex thread: Codex sends the earlier turn back itself.
    fake.enqueue({ kind: "reply", text: ["Again."] });
    await client.message.append({ conversationId: id, role: "user", content: "once more" });
    const second = await client.step({ conversationId: id });
    expect((await events.waitForEnd(second.generationId, 20_000)).method).toBe("generation_complete");
    expect(JSON.stringify(fake.requests[1])).toContain("Hello from Codex.");
    expect((await client.conversation.get({ conversationId: id })).conversation.runtimeSession).toEqual(session);
  }, 30_000);

  it("offers the runtime's approval question as tool_pending, and runs the command on tool.confirm — beside an ordinary conversation", async () => {
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_touch", name: "exec_command", args: JSON.stringify({ cmd: "touch made-by-codex.txt" }) }] });
    const { id, events } = await newConversation(client, { model: "codex/fake-model", workspace }, "make a file");
    const { generationId } = await client.step({ conversationId: id });
    const pending = (await events.waitForMethod("tool_pending", 20_000)).params;
    expect(pending).toMatchObject({ generationId, toolCallId: "call_touch", toolName: "shell", autoConfirmed: false });
    expect(pending.arguments.command).toContain("touch made-by-codex.txt");
    expect((await client.conversation.get({ conversationId: id })).state.pendingTools).toEqual([expect.objectContaining({ toolCallId: "call_touch" })]);

    // While Codex waits, an ordinary conversation runs beside it.
    await expectOrdinaryStep(client, fake);
    expect(existsSync(join(workspace, "made-by-codex.txt"))).toBe(false);

    // Codex takes yes or no: changed arguments are refused, and the call still waits.
    const edit = await rpcError(client.tool.confirm({ conversationId: id, toolCallId: "call_touch", action: "edit", arguments: { command: "true" } }));
    expect(edit.code).toBe(-32012);
    expect(edit.message).toContain("confirm or skip");

    fake.enqueue({ kind: "reply", text: ["Made it."] });
    await client.tool.confirm({ conversationId: id, toolCallId: "call_touch", action: "confirm" });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    expect(existsSync(join(workspace, "made-by-codex.txt"))).toBe(true);
    expect(events.methods().filter((m) => m.startsWith("tool_"))).toEqual(["tool_pending", "tool_executing", "tool_completed"]);
    const records = (await client.conversation.get({ conversationId: id, includeRecords: true })).records!;
    expect(records.map((r) => r.type)).toEqual(["message", "tool_call", "message"]);
    expect(records[1]).toMatchObject({ toolCallId: "call_touch", toolName: "shell", status: "completed", success: true, exitCode: 0, runBy: "runtime" });
    expect(records[2]).toMatchObject({ role: "assistant", content: "Made it." });
  }, 40_000);

  it("counts each model call's usage (usage_updated), carries Codex's plan (plan_updated), and applies the conversation's tool policy and mode to its questions", async () => {
    const touch = (id: string, file: string) => ({ kind: "reply" as const, toolCalls: [{ id, name: "exec_command", args: JSON.stringify({ cmd: `touch ${file}` }) }] });
    const plan = [
      { step: "Look around", status: "in_progress" },
      { step: "Answer", status: "pending" },
    ];
    // Two conversations at once, on one Codex process: shell denied by toolPolicy; auto mode (runs without asking).
    fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_plan", name: "update_plan", args: JSON.stringify({ plan }) }], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } },
      touch("call_denied", "denied.txt"),
      { kind: "reply", text: ["Not allowed."] },
    );
    const denied = await newConversation(client, { model: "codex/fake-model", workspace, settings: { toolPolicy: { shell: "never" } } }, "plan, then make a file");
    const first = await client.step({ conversationId: denied.id });
    expect((await denied.events.waitForEnd(first.generationId, 20_000)).method).toBe("generation_complete");
    expect(denied.events.of("plan_updated")).toEqual([
      expect.objectContaining({
        generationId: first.generationId,
        entries: [
          { content: "Look around", status: "in_progress" },
          { content: "Answer", status: "pending" },
        ],
      }),
    ]);
    const failed = denied.events.of("tool_failed").find((p) => p.record.toolCallId === "call_denied")!;
    expect(failed.record).toMatchObject({ toolName: "shell", status: "failed", runBy: "runtime" });
    expect(failed.record.result).toContain("settings.toolPolicy");
    expect(denied.events.of("tool_pending").filter((p) => p.toolCallId === "call_denied")).toEqual([]);
    expect(existsSync(join(workspace, "denied.txt"))).toBe(false);
    const usage = denied.events.of("usage_updated");
    expect(usage).toHaveLength(3);
    expect(usage[0]).toMatchObject({ generationId: first.generationId, model: "codex/fake-model", last: { promptTokens: 100, completionTokens: 10, totalTokens: 110 }, cost: null });
    const got = await client.conversation.get({ conversationId: denied.id });
    expect(got.state.plan?.entries).toHaveLength(2);
    expect(got.conversation.usage).toMatchObject({ modelCalls: 3, promptTokens: usage.reduce((n, u) => n + u.last!.promptTokens, 0) });
    expect(usage.at(-1)!.conversation).toEqual(got.conversation.usage);

    fake.enqueue(touch("call_auto", "auto.txt"), { kind: "reply", text: ["Made."] });
    const auto = await newConversation(client, { model: "codex/fake-model", workspace, settings: { mode: "auto" } }, "make a file");
    const second = await client.step({ conversationId: auto.id });
    expect((await auto.events.waitForEnd(second.generationId, 20_000)).method).toBe("generation_complete");
    expect(auto.events.of("tool_pending")).toEqual([expect.objectContaining({ toolCallId: "call_auto", autoConfirmed: true, autoReason: "policy" })]);
    expect(existsSync(join(workspace, "auto.txt"))).toBe(true);
  }, 40_000);

  it("puts Codex's request_user_input to the user as input_requested, and hands back the answer given by input.respond", async () => {
    const questions = [{ id: "color", header: "Color", question: "Which color?", options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] }];
    fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_ask", name: "request_user_input", args: JSON.stringify({ questions }) }] });
    const { id, events } = await newConversation(client, { model: "codex/fake-model", workspace }, "ask me");
    const { generationId } = await client.step({ conversationId: id });
    const asked = (await events.waitForMethod("input_requested", 20_000)).params;
    expect(asked).toMatchObject({ generationId, source: "ask_user", question: "Color: Which color?", choices: ["Red", "Blue"] });
    expect((await client.conversation.get({ conversationId: id })).state.pendingInputs).toEqual([expect.objectContaining({ requestId: asked.requestId })]);
    fake.enqueue({ kind: "reply", text: ["Blue it is."] });
    expect(await client.input.respond({ conversationId: id, requestId: asked.requestId, answer: "Blue" })).toEqual({ outcome: "answered" });
    expect((await events.waitForEnd(generationId, 20_000)).method).toBe("generation_complete");
    const output = JSON.stringify(fake.requests[1]!.input).match(/call_ask[^}]*output[^}]*/)?.[0] ?? "";
    expect(output).toContain("Blue");
  }, 30_000);

  it("stops a turn on interrupt with the partial text kept, and the thread goes on afterwards", () => expectInterruptKeepsPartial(client, fake, "codex/fake-model", workspace, 2000), 40_000);

  it("declines a call on tool.confirm skip, and cancels a waiting one on interrupt", async () => {
    const touch = (id: string, file: string) => ({ kind: "reply" as const, toolCalls: [{ id, name: "exec_command", args: JSON.stringify({ cmd: `touch ${file}` }) }] });
    fake.enqueue(touch("call_no", "declined.txt"), touch("call_wait", "never.txt"));
    const { id, events } = await newConversation(client, { model: "codex/fake-model", workspace }, "make two files");
    const { generationId } = await client.step({ conversationId: id });
    await events.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === "call_no", 20_000);
    expect(await client.tool.confirm({ conversationId: id, toolCallId: "call_no", action: "skip" })).toMatchObject({ status: "skipped" });
    // Codex tells its model the command was declined, and the model asks for another one.
    await events.waitFor((e) => e.method === "tool_pending" && e.params.toolCallId === "call_wait", 20_000);
    expect(JSON.stringify(fake.requests[1]!.input)).toContain("call_no");
    await client.interrupt({ conversationId: id });
    expect((await events.waitForEnd(generationId, 5000)).method).toBe("interrupted");
    expect(events.of("tool_skipped").map((p) => [p.record.toolCallId, p.reason])).toEqual([
      ["call_no", "user"],
      ["call_wait", "interrupted"],
    ]);
    expect(existsSync(join(workspace, "declined.txt")) || existsSync(join(workspace, "never.txt"))).toBe(false);
    expect((await client.conversation.get({ conversationId: id })).state.pendingTools).toEqual([]);
  }, 40_000);

  it("lists each configured runtime in models.list with whether its package is installed", async () => {
    const { runtimes } = await client.models.list({});
    expect(runtimes).toEqual([
      { name: "codex", runtime: "codex", status: "ok" },
      { name: "missing", runtime: "codex", status: "missing", error: expect.stringContaining(`npm install --prefix ${join(root, "no-runtimes-here")} @openai/codex@`) },
    ]);
  });

  it("refuses what the runtime cannot do, and a runtime whose package is missing names the install command", () =>
    expectRefusals(client, fake, { model: "codex/fake-model", workspace, missingModel: "missing/gpt-5-codex", missingDir: join(root, "no-runtimes-here"), pkg: CODEX_PACKAGE }));
});
