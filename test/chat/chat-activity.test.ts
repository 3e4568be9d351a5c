/**
 * What `agentwire chat` shows of what the agent is doing (issue 22): the
 * title and the diff of a file tool's change before it asks (coloured on a
 * terminal, plain otherwise, cut when long, a warning when the call would
 * fail), the diff again after an edit of the arguments, the plan when
 * update_plan sets it, notices on stderr (never in the answer on stdout), a
 * usage line at the end of a turn; and in --json the same as lines of their
 * own, as the server sent them, with the turn's usage on the `end` line.
 * Through the shipped CLI against a server whose model is the fake endpoint
 * (on a real pseudo-terminal for the questions), as chat-cli.test.ts does.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runChat } from "../../src/chat/chat-command.js";
import { MAX_DIFF_LINES } from "../../src/chat/tool-call-lines.js";
import { parseCli } from "../../src/cli-options.js";
import { type ChatSetup, withChatAgent } from "../harness/chat-agent.js";
import { killAllCliIo, runCliInTerminal, stripAnsi } from "../harness/cli-io.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { shippedBundle } from "../harness/shipped-bundle.js";
import { eventually } from "../harness/eventually.js";
import { startMcpAgent, stdioFixture } from "../fixtures/mcp/mcp-fixture.js";

const withAgent = withChatAgent;
type Setup = ChatSetup;

let bundle: { entry: string };
beforeAll(() => {
  bundle = { entry: shippedBundle() };
});
afterAll(async () => {
  await killAllCli();
  await killAllCliIo();
});

async function chat({ fx, workspace }: Setup, args: string[]) {
  const cli = runCli(["chat", "--url", fx.server.url, ...args], {}, bundle.entry, workspace);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** runChat in this process with piped streams (not terminals): the binary's code, without a process of its own. */
function startChatInProcess(url: string, workspace: string, argv: string[], options: { stderrIsTTY?: boolean; env?: NodeJS.ProcessEnv } = {}) {
  const parsed = parseCli(["chat", "--url", url, ...argv], {}, { discover: false });
  const stdin = new PassThrough();
  stdin.end("");
  const [stdout, stderr] = [new PassThrough(), Object.assign(new PassThrough(), { isTTY: options.stderrIsTTY })];
  let out = "";
  let err = "";
  stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
  stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
  const exited = runChat(parsed.chat!, { stdin: stdin as never, stdout: stdout as never, stderr: stderr as never, env: options.env ?? {}, cwd: workspace });
  return { exited, stdout: () => out, stderr: () => err };
}

async function chatInProcess({ fx, workspace }: Setup, argv: string[], options?: Parameters<typeof startChatInProcess>[3]) {
  const run = startChatInProcess(fx.server.url, workspace, argv, options);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

type Line = { type: string; method?: string; params?: any; result?: any; usage?: any };
const ndjson = (text: string): Line[] =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);

const PLAN = [
  { content: "Read the failing test", status: "completed" },
  { content: "Fix src/invoice.ts", status: "in_progress", priority: "high" },
  { content: "Run the tests", status: "pending" },
];
const PLAN_THEN_DONE = [
  { kind: "reply" as const, toolCalls: [{ id: "call_plan", name: "update_plan", args: JSON.stringify({ entries: PLAN }) }] },
  { kind: "reply" as const, text: ["Planned."] },
];
const CHECKLIST = "Plan:\n  [x] Read the failing test\n  [~] Fix src/invoice.ts\n  [ ] Run the tests\n";

/** A 429 with rate-limit headers, then the answer: the retry is made after the 10 ms the endpoint asks for. */
const RATE_LIMITED = {
  kind: "error" as const,
  status: 429,
  headers: { "retry-after-ms": "10", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s" },
  message: "Rate limit reached",
  type: "rate_limit_error",
};
const RETRY_NOTICES =
  "agentwire: warning: The model endpoint is rate limiting requests (resets in 1s).\n" +
  "agentwire: info: The model request failed (HTTP 429); retrying in 10 ms (attempt 1 of 2).\n";

const PRICING = { inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8, currency: "USD" };
const PRICED = { providers: { default: { baseUrl: "http://127.0.0.1:1/v1", models: { "fake-model": { contextWindow: 1600, pricing: PRICING } } } } };

describe.concurrent("agentwire chat shows what the agent does", { timeout: 60_000 }, () => {
  it("on a terminal: the title and the coloured diff before the question, the diff again after an edit, and a warning before approving a call that would fail", withAgent(async (setup) => {
    const { fx, workspace } = setup;
    const editor = join(workspace, "edit.sh");
    const edited = { path: "notes.txt", old_string: "line two", new_string: "line TWO, edited" };
    await writeFile(editor, `#!/bin/sh\nprintf '%s' '${JSON.stringify(edited)}' > "$1"\n`, { mode: 0o755 });
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_edit", name: "edit_file", args: JSON.stringify({ path: "notes.txt", old_string: "line two", new_string: "line 2" }) }] },
      // One call per round: output that arrives while a question is open waits for its answer.
      { kind: "reply", toolCalls: [{ id: "call_bad", name: "edit_file", args: JSON.stringify({ path: "notes.txt", old_string: "line nine", new_string: "line 9" }) }] },
      { kind: "reply", text: ["Edited."] },
    );
    const term = runCliInTerminal(["chat", "fix the notes", "--url", fx.server.url], { EDITOR: editor, NO_COLOR: "" }, workspace, bundle.entry);
    const question = String.raw`Run edit_file\? \[y\]es / \[n\]o \[reason\] / \[e\]dit / \[a\]uto N / \[A\]lways: $`;
    // The diff, not the arguments (it says what they do), between the title and the question.
    const first = await term.waitFor(new RegExp(
      String.raw`⚙ Edit notes\.txt · edit_file\n--- a/notes\.txt\n\+\+\+ b/notes\.txt\n@@ -1,4 \+1,4 @@\n line one\n-line two\n\+line 2\n line three\n line four\n` + question,
    ));
    expect(first).not.toContain("old_string");
    // Coloured like git diff: - red, + green, @@ cyan.
    expect(term.output()).toContain("\x1b[31m-line two\x1b[39m");
    expect(term.output()).toContain("\x1b[32m+line 2\x1b[39m");
    expect(term.output()).toContain("\x1b[36m@@ -1,4 +1,4 @@\x1b[39m");
    term.write("e\r");
    // The edited call's change is recomputed and shown before it runs; then the failing call is asked about with a warning.
    await term.waitFor(new RegExp(
      String.raw`⚙ Edit notes\.txt · edit_file \(as edited\)\n--- a/notes\.txt\n\+\+\+ b/notes\.txt\n@@ -1,4 \+1,4 @@\n line one\n-line two\n\+line TWO, edited\n line three\n line four\n[\s\S]*✓ edit_file\n[\s\S]*` +
        String.raw`⚙ Edit notes\.txt · edit_file \{"path":"notes\.txt","old_string":"line nine","new_string":"line 9"\}\n` +
        String.raw`⚠ this call would fail as proposed: old_string was not found in notes\.txt[^\n]*\n` +
        question,
    ));
    term.write("n\r");
    await term.waitFor(/↷ edit_file skipped \(user\)[\s\S]*Edited\.\nusage: \d+ tokens in, \d+ out\n[\s\S]*> $/);
    term.write("\x04");
    expect((await term.exited).code).toBe(0);
    expect(await readFile(join(workspace, "notes.txt"), "utf8")).toBe("line one\nline TWO, edited\nline three\nline four\n");
  }));

  it("without a terminal the diff is plain text, and a long one is cut saying how many lines were left out", withAgent(async (setup) => {
    const { fx } = setup;
    const content = Array.from({ length: 200 }, (_, i) => `row ${i + 1}`).join("\n") + "\n";
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_write", name: "write_file", args: JSON.stringify({ path: "rows.txt", content }) }] },
      { kind: "reply", text: ["Written."] },
    );
    const { code, stdout, stderr } = await chatInProcess(setup, ["write rows", "--yes"]);
    expect(code).toBe(0);
    expect(stdout).toBe("Written.\n");
    expect(stderr).not.toContain("\x1b");
    const { data } = await fx.client.conversation.list({});
    const { records } = await fx.client.conversation.get({ conversationId: data[0]!.id, includeRecords: true });
    const diff = String(records!.find((r) => r.type === "tool_call")!.diff).replace(/\n$/, "").split("\n");
    expect(diff.length).toBeGreaterThan(MAX_DIFF_LINES);
    const shown = diff.slice(0, MAX_DIFF_LINES).join("\n");
    expect(stderr).toContain(
      `⚙ Write rows.txt · write_file (runs without asking)\n${shown}\n… ${diff.length - MAX_DIFF_LINES} more diff lines not shown\n✓ write_file\n`,
    );
    expect(stderr).not.toContain(diff[MAX_DIFF_LINES]);
  }));

  it("NO_COLOR leaves a terminal's diff plain", withAgent(async (setup) => {
    const edit = { kind: "reply" as const, toolCalls: [{ name: "edit_file", args: JSON.stringify({ path: "notes.txt", old_string: "line four", new_string: "line 4" }) }] };
    const undo = { kind: "reply" as const, toolCalls: [{ name: "edit_file", args: JSON.stringify({ path: "notes.txt", old_string: "line 4", new_string: "line four" }) }] };
    setup.fx.fake.enqueue(edit, { kind: "reply", text: ["Done."] });
    const coloured = await chatInProcess(setup, ["edit", "--yes"], { stderrIsTTY: true });
    expect(coloured.stderr).toContain("\x1b[32m+line 4\x1b[39m");
    setup.fx.fake.enqueue(undo, { kind: "reply", text: ["Done."] });
    const plain = await chatInProcess(setup, ["edit back", "--yes"], { stderrIsTTY: true, env: { NO_COLOR: "1" } });
    expect(plain.stderr).toContain("\n-line 4\n+line four\n");
    expect(plain.stderr).not.toMatch(/\x1b\[3\dm/);
  }));

  it("prints the plan as a checklist when update_plan sets it", withAgent(async (setup) => {
    setup.fx.fake.enqueue(...PLAN_THEN_DONE);
    const { code, stdout, stderr } = await chat(setup, ["make a plan"]);
    expect(code).toBe(0);
    expect(stdout).toBe("Planned.\n");
    expect(stderr).toContain(`⚙ Update plan (3 steps) · update_plan (runs without asking)\n${CHECKLIST}✓ update_plan\n`);
  }));

  it("a 429 then a 200: the rate limit and the retry are notices on stderr, the answer alone is on stdout", withAgent(async (setup) => {
    setup.fx.fake.enqueue(RATE_LIMITED, { kind: "reply", text: ["Hello", " after the retry."] });
    const { code, stdout, stderr } = await chat(setup, ["hello"]);
    expect(code).toBe(0);
    expect(stdout).toBe("Hello after the retry.\n");
    expect(stderr).toMatch(new RegExp(`^${RETRY_NOTICES.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}usage: \\d+ tokens in, 2 out\\n$`));
    expect(setup.fx.fake.requests).toHaveLength(2);
  }));

  it("ends each turn with its usage: tokens in and cached, out and reasoning, the context against the model's window, the cost from its pricing", withAgent(async (setup) => {
    setup.fx.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [{ id: "call_1", name: "shell", args: '{"command":"true"}' }],
        usage: { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, cached_tokens: 400, reasoning_tokens: 50 },
      },
      { kind: "reply", text: ["Done."], usage: { prompt_tokens: 1300, completion_tokens: 100, total_tokens: 1400, cached_tokens: 1000, reasoning_tokens: 0 } },
    );
    const { code, stdout, stderr } = await chat(setup, ["run true", "--yes"]);
    expect(code).toBe(0);
    expect(stdout).toBe("Done.\n");
    // Both calls added up; the context is the last call's 1400 of 1600 (which crossed 80 %, a warning); (600·2 + 400·0.5 + 200·8 + 300·2 + 1000·0.5 + 100·8) / 1e6.
    expect(stderr).toContain("agentwire: warning: The conversation fills 88 % of fake-model's context window (1400 of 1600 tokens).\n");
    expect(stderr.split("\n").at(-2)).toBe("usage: 2,300 tokens in (1,400 cached), 300 out (50 reasoning) · context 88% of 1,600 · cost 0.0049 USD");
  }, PRICED));

  it("--json: usage_updated, plan_updated and notice are lines of their own, as the server sent them and in its order; end carries the turn's usage", withAgent(async (setup) => {
    const { fx } = setup;
    fx.fake.enqueue(RATE_LIMITED, ...PLAN_THEN_DONE);
    const { code, stdout, stderr } = await chat(setup, ["make a plan", "--json"]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    const lines = ndjson(stdout);
    const notifications = lines.filter((l) => l.type === "notification");
    expect(notifications.map((l) => l.method)).toEqual([
      "message_added",
      "generation_started",
      "notice",
      "notice",
      "message_added",
      "usage_updated",
      "generation_complete",
      "tool_pending",
      "tool_executing",
      "plan_updated",
      "tool_completed",
      "generation_started",
      "generation_progress",
      "message_added",
      "usage_updated",
      "generation_complete",
    ]);
    expect(notifications.filter((l) => l.method === "notice").map((l) => [l.params.level, l.params.code])).toEqual([
      ["warning", "rate_limited"],
      ["info", "model_retry"],
    ]);
    expect(notifications.find((l) => l.method === "plan_updated")!.params.entries).toEqual(PLAN);
    // Unchanged: the conversation's own events, replayed to another client, are the same objects.
    const conversationId = lines[0]!.result.id as string;
    const replayed: { method: string; params: any }[] = [];
    const other = await fx.connect();
    other.onAny((method, params) => replayed.push({ method, params }));
    await other.conversation.subscribe({ conversationId, afterSeq: 0 });
    expect(notifications.map((l) => ({ method: l.method, params: l.params }))).toEqual(replayed);
    await other.close();
    const usage = notifications.filter((l) => l.method === "usage_updated").at(-1)!.params;
    expect(usage.generation.modelCalls).toBe(2);
    expect(lines.at(-1)).toEqual({ type: "end", outcome: "completed", exitCode: 0, usage: usage.generation });
  }));
});

it("--json passes on a server-wide notice (an MCP server went down), which names no conversation", async () => {
  const dir = await mkdtemp(join(tmpdir(), "agentwire-chat-mcp-"));
  const pidFile = join(dir, "pid");
  const agent = await startMcpAgent({ mcpServers: { fx: stdioFixture({ FIXTURE_PID_FILE: pidFile }) } });
  try {
    await eventually(async () => (await agent.client.server.status()).mcp.connected === 1, 10_000, "connected");
    // The answer starts and then stalls, so the chat is still running when the MCP server dies.
    agent.fake.enqueue({ kind: "reply", text: ["Thinking", " on"], hangAfter: 1 });
    const run = startChatInProcess(agent.server.url, dir, ["wait", "--json"]);
    await eventually(async () => run.stdout().includes('"kind":"text"'), 10_000, "the answer started");
    process.kill(Number(await readFile(pidFile, "utf8")), "SIGKILL");
    await eventually(async () => run.stdout().includes('"mcp_server_down"'), 10_000, "the notice reached the chat");
    const conversationId = (ndjson(run.stdout())[0]!.result as { id: string }).id;
    await agent.client.interrupt({ conversationId });
    expect(await run.exited).toBe(130);
    const notice = ndjson(run.stdout()).find((l) => l.method === "notice")!;
    expect(notice.params).toMatchObject({ level: "warning", code: "mcp_server_down", data: { server: "fx" } });
    expect(notice.params).not.toHaveProperty("conversationId");
    expect(run.stderr()).toBe("");
  } finally {
    await agent.close();
    await rm(dir, { recursive: true, force: true });
  }
}, 30_000);
