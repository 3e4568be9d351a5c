/**
 * `agentwire chat` and `agentwire conversations` as real child processes:
 * against a server in this process (--url) whose model is the fake
 * OpenAI-compatible server, and once with the embedded server (--data-dir).
 * Each test asserts on what the model received (the fake's requests) and on
 * what the command printed and how it exited. The interactive paths run on a
 * real pseudo-terminal (util-linux `script`).
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { PassThrough } from "node:stream";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runChat } from "../../src/chat/chat-command.js";
import { parseAttachSpec } from "../../src/chat/chat-options.js";
import { conversationToMarkdown } from "../../src/chat/markdown-export.js";
import { parseToolAnswer } from "../../src/chat/tool-prompt.js";
import { parseCli, UsageError } from "../../src/cli-options.js";
import { type ChatSetup, withChatAgent } from "../harness/chat-agent.js";
import { killAllCliIo, runCliInTerminal, runCliWithInput, stripAnsi } from "../harness/cli-io.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { shippedBundle } from "../harness/shipped-bundle.js";

const withAgent = withChatAgent;
type Setup = ChatSetup;

// The children run the shipped bundle of the current source (not through tsx): the code
// the `agentwire` bin runs, at a fifth of the start-up CPU.
let bundle: { entry: string };
beforeAll(() => {
  bundle = { entry: shippedBundle() };
});
afterAll(async () => {
  await killAllCli();
  await killAllCliIo();
});

type Line = { type: string; method?: string; params?: any; result?: any; error?: any; outcome?: string; exitCode?: number; message?: string };
const ndjson = (text: string): Line[] =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);

/** `agentwire chat ARGS --url <the fixture's server>` run in the test's workspace. */
async function chat({ fx, workspace }: Setup, args: string[], extraEnv: Record<string, string> = {}) {
  const cli = runCli(["chat", "--url", fx.server.url, ...args], extraEnv, bundle.entry, workspace);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

const TOOL_THEN_DONE = [
  { kind: "reply" as const, toolCalls: [{ id: "call_echo", name: "shell", args: '{"command":"echo $((6*7))-marker"}' }] },
  { kind: "reply" as const, text: ["All", " done."] },
];

describe.concurrent("agentwire chat, scripted", { timeout: 60_000 }, () => {
  it("--json --yes: one JSON object per line, every notification and result; the tool runs, the model sees its output; exit 0", withAgent(async (setup) => {
    const { fx, workspace } = setup;
    fx.fake.enqueue(...TOOL_THEN_DONE);
    const { code, stdout, stderr } = await chat(setup, ["run echo", "--json", "--yes"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = ndjson(stdout);
    const methods = lines.map((l) => `${l.type}:${l.method ?? l.outcome}`);
    expect(methods.slice(0, 4)).toEqual(["result:conversation.create", "result:conversation.subscribe", "notification:message_added", "result:message.append"]);
    expect(methods).toContain("result:step");
    expect(lines.find((l) => l.method === "tool_pending")?.params).toMatchObject({ toolName: "shell", autoConfirmed: true });
    expect(lines.find((l) => l.method === "tool_completed")?.params.record).toMatchObject({ status: "completed", exitCode: 0 });
    const complete = lines.filter((l) => l.method === "generation_complete").map((l) => l.params);
    expect(complete.map((p) => p.final)).toEqual([false, true]);
    expect(lines.filter((l) => l.method === "generation_progress" && l.params.kind === "text").map((l) => l.params.delta).join("")).toBe("All done.");
    // The outcome in the protocol's word (GenerationOutcome: completed | interrupted | error), never "complete".
    // The turn's usage totals (its last usage_updated's) ride on the end line.
    const usage = lines.filter((l) => l.method === "usage_updated").at(-1)!.params.generation;
    expect(usage).toMatchObject({ modelCalls: 2, cost: null });
    expect(lines.at(-1)).toEqual({ type: "end", outcome: "completed", exitCode: 0, usage });
    // A new conversation's workspace is the directory chat ran in; the model got the prompt, then the tool's output.
    expect(lines[0]!.result).toMatchObject({ workspace, title: "run echo" });
    expect(fx.fake.requests[0]!.messages.at(-1)).toEqual({ role: "user", content: "run echo" });
    const toolMessage = fx.fake.requests[1]!.messages.find((m) => m.role === "tool");
    expect(toolMessage).toMatchObject({ tool_call_id: "call_echo" });
    expect(String(toolMessage.content)).toContain("42-marker");
  }));

  it("without a terminal and without a flag, tool calls are skipped (never a hang), and stderr says how to allow them", withAgent(async (setup) => {
    const { fx } = setup;
    fx.fake.enqueue(...TOOL_THEN_DONE);
    const { code, stdout, stderr } = await chat(setup, ["run echo"]);
    expect(code).toBe(0);
    expect(stdout).toBe("All done.\n");
    expect(stderr).toContain("no terminal to ask about shell: skipped (pass --yes, --auto N or --deny to decide)");
    expect(stderr).toContain("↷ shell skipped (user)");
    expect(stderr).not.toContain("42-marker");
    // The model was told the call did not run, and its output never existed.
    const toolMessage = fx.fake.requests[1]!.messages.find((m) => m.role === "tool");
    expect(toolMessage).toMatchObject({ tool_call_id: "call_echo" });
    expect(String(toolMessage.content)).not.toContain("42-marker");
  }));

  it("exits 1 with the model's error on stderr", withAgent(async (setup) => {
    const { fx } = setup;
    fx.fake.enqueue({ kind: "error", status: 400, message: "this model does not exist", type: "invalid_request_error" });
    const { code, stdout, stderr } = await chat(setup, ["hello"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("this model does not exist");
    expect(fx.fake.requests).toHaveLength(1);
  }));

  it("--conversation continues one, with the prompt read from stdin; --model goes to the step; stdout is just the answer", withAgent(async (setup) => {
    const { fx, workspace } = setup;
    const first = await fx.client.conversation.create({ title: "earlier" });
    await fx.client.message.append({ conversationId: first.id, role: "user", content: "my name is Ada" });
    await fx.client.message.append({ conversationId: first.id, role: "assistant", content: "Hello Ada." });
    fx.fake.enqueue({ kind: "reply", reasoning: ["Recall", "ing."], text: ["You are", " Ada."] });
    const cli = runCliWithInput(["chat", "--url", fx.server.url, "--conversation", first.id, "--model", "other-model"], "what is my name?\n", {}, workspace, bundle.entry);
    const { code } = await cli.exited;
    // Reasoning on stderr, uncoloured (not a terminal), then the turn's usage.
    expect(cli.stderr()).toMatch(/^Recalling\.\nusage: \d+ tokens in, 4 out\n$/);
    expect(code).toBe(0);
    expect(cli.output()).toBe("You are Ada.\n");
    expect(fx.fake.requests[0]!.model).toBe("other-model");
    expect(fx.fake.requests[0]!.messages.filter((m) => m.role !== "system")).toEqual([
      { role: "user", content: "my name is Ada" },
      { role: "assistant", content: "Hello Ada." },
      { role: "user", content: "what is my name?" },
    ]);
    const { records } = await fx.client.conversation.get({ conversationId: first.id, includeRecords: true });
    // The two appended, the question, the thinking (a reasoning record) and the answer.
    expect(records!.map((r) => r.type)).toEqual(["message", "message", "message", "reasoning", "message"]);
  }));
});

/** runChat in this process with piped streams: the same code as the binary, for the cases that need no process of their own. */
async function chatInProcess({ fx, workspace }: Setup, argv: string[], stdinText = "") {
  const parsed = parseCli(["chat", "--url", fx.server.url, ...argv], {}, { discover: false });
  const stdin = new PassThrough();
  stdin.end(stdinText);
  const [stdout, stderr] = [new PassThrough(), new PassThrough()];
  let out = "";
  let err = "";
  stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
  stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
  const code = await runChat(parsed.chat!, { stdin: stdin as never, stdout: stdout as never, stderr: stderr as never, env: {}, cwd: workspace });
  return { code, stdout: out, stderr: err };
}

describe.concurrent("runChat", { timeout: 15_000 }, () => {
  it("--deny skips every tool call", withAgent(async (setup) => {
    const { fx } = setup;
    fx.fake.enqueue(...TOOL_THEN_DONE);
    const { code, stdout } = await chatInProcess(setup, ["run echo", "--deny", "--json"]);
    expect(code).toBe(0);
    const lines = ndjson(stdout);
    expect(lines.some((l) => l.method === "tool_executing")).toBe(false);
    expect(lines.find((l) => l.method === "tool_skipped")?.params).toMatchObject({ reason: "user" });
    expect(lines.find((l) => l.type === "result" && l.method === "tool.confirm")?.result).toMatchObject({ status: "skipped" });
    expect(String(fx.fake.requests[1]!.messages.find((m) => m.role === "tool")?.content)).not.toContain("42-marker");
  }));

  it("an unknown --conversation is exit 1 naming the problem; an empty prompt is usage (exit 2); neither reaches the model", withAgent(async (setup) => {
    const { fx } = setup;
    const unknown = await chatInProcess(setup, ["hi", "--conversation", "c_nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/conversation\.get failed: .*CONVERSATION_NOT_FOUND/);
    const json = await chatInProcess(setup, ["hi", "--conversation", "c_nope", "--json"]);
    expect(ndjson(json.stdout).map((l) => l.type)).toEqual(["error", "end"]);
    expect(ndjson(json.stdout).at(-1)).toMatchObject({ outcome: "error", exitCode: 1 });
    const empty = await chatInProcess(setup, [], "  \n");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("chat needs a PROMPT");
    expect(fx.fake.requests).toHaveLength(0);
  }));

  it("a prompt over the server's frame limit is exit 1 naming the limit and its value, not \"connection closed (code 1009)\"", withAgent(async (setup) => {
    const { fx } = setup;
    const prompt = "x".repeat(20_000);
    for (const json of [false, true]) {
      const { code, stdout, stderr } = await chatInProcess(setup, json ? ["--json"] : [], prompt);
      expect(code).toBe(1);
      const said = json ? ndjson(stdout).at(-1)!.message ?? JSON.stringify(ndjson(stdout)) : stderr;
      expect(said).toMatch(/the prompt is too large to send: the request would be 2\d{4} bytes, over the server's frame limit of 8192 bytes \(maxPayloadBytes/);
      expect(said).not.toContain("1009");
    }
    // A frame that does reach the server over its limit (a 10 kB conversation id) closes the socket with 1009: said in words too.
    const closed = await chatInProcess(setup, ["hi", "--conversation", `c_${"x".repeat(10_000)}`]);
    expect(closed.code).toBe(1);
    expect(closed.stderr).toContain("conversation.get failed: connection closed by the server (1009): a request was over its frame limit of 8192 bytes (maxPayloadBytes");
    expect(fx.fake.requests).toHaveLength(0);
  }, { limits: { maxPayloadBytes: 8192 } }));
});

describe.concurrent("agentwire chat with the embedded server", { timeout: 60_000 }, () => {
  it("starts a server on the data dir, attaches a line range, and conversations list finds the conversation there", withAgent(async (setup) => {
    const { fx, workspace } = setup;
    const dataDir = join(workspace, "data");
    await mkdir(dataDir);
    const env = { OPENAI_BASE_URL: fx.fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "embedded-model" };
    fx.fake.enqueue({ kind: "reply", text: ["Read it."] });
    const run = runCli(["chat", "summarise", "--attach", "notes.txt:2-3", "--data-dir", dataDir, "--json"], env, bundle.entry, workspace);
    const { code } = await run.exited;
    expect(run.stderr()).toBe("");
    expect(code).toBe(0);
    const lines = ndjson(run.stdout());
    expect(lines.at(-1)).toMatchObject({ type: "end", exitCode: 0 });
    const request = fx.fake.requests[0]!;
    expect(request.model).toBe("embedded-model");
    const user = JSON.stringify(request.messages.at(-1));
    expect(user).toContain("summarise");
    expect(user).toContain("line two\\nline three");
    expect(user).not.toContain("line one");
    const id = lines[0]!.result.id as string;

    const list = runCli(["conversations", "list", "--data-dir", dataDir, "--json"], env, bundle.entry, workspace);
    expect((await list.exited).code).toBe(0);
    expect((JSON.parse(list.stdout()) as { id: string; title: string }[]).map((c) => [c.id, c.title])).toEqual([[id, "summarise"]]);
  }));
});

describe.concurrent("agentwire conversations", { timeout: 60_000 }, () => {
  it("list, show, export --format markdown, and rm", withAgent(async (setup) => {
    const { fx, workspace } = setup;
    const conversation = await fx.client.conversation.create({ title: "Trip plans" });
    await fx.client.message.append({ conversationId: conversation.id, role: "user", content: "Where to go?" });
    await fx.client.message.append({ conversationId: conversation.id, role: "assistant", content: "Try ```Lisbon```." });
    const run = async (...args: string[]) => {
      const cli = runCli(["conversations", ...args, "--url", fx.server.url], {}, bundle.entry);
      const { code } = await cli.exited;
      return { code, stdout: cli.stdout(), stderr: cli.stderr() };
    };
    const [list, show, markdown] = await Promise.all([run("list"), run("show", conversation.id), run("export", conversation.id, "--format", "markdown")]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${conversation.id} .* 2 records  Trip plans$`, "m"));
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("user: Where to go?\nassistant: Try ```Lisbon```.\n");
    expect(markdown.code).toBe(0);
    expect(markdown.stdout).toContain("# Trip plans\n");
    expect(markdown.stdout).toContain("## User\n\nWhere to go?\n\n## Assistant\n\nTry ```Lisbon```.\n");

    const rm = await run("rm", conversation.id);
    expect(rm).toMatchObject({ code: 0, stderr: `deleted ${conversation.id}\n` });
    await expect(fx.client.conversation.get({ conversationId: conversation.id })).rejects.toMatchObject({ code: -32010 });
  }));
});

describe.concurrent("agentwire conversations rewind, unrewind, compact", { timeout: 60_000 }, () => {
  it("rewind --restore-files --json undoes an edit_file in the workspace, unrewind --json redoes it, compact --json prints the token figures", withAgent(async (setup) => {
    const { fx, workspace } = setup;
    const notes = join(workspace, "notes.txt");
    const conversation = await fx.client.conversation.create({ workspace });
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_edit", name: "edit_file", args: JSON.stringify({ path: "notes.txt", old_string: "line two", new_string: "line 2" }) }] },
      { kind: "reply", text: ["Edited."] },
    );
    const user = await fx.client.message.append({ conversationId: conversation.id, role: "user", content: "edit notes" });
    const { generationId } = await fx.client.step({ conversationId: conversation.id, autoConfirm: true });
    await expect(fx.client.generation.wait({ conversationId: conversation.id, generationId })).resolves.toMatchObject({ outcome: "completed" });
    expect(await readFile(notes, "utf8")).toContain("line 2\n");
    const run = async (...args: string[]) => {
      const cli = runCli(["conversations", ...args, "--url", fx.server.url], {}, bundle.entry);
      const { code } = await cli.exited;
      return { code, stdout: cli.stdout(), stderr: cli.stderr() };
    };

    const rewound = await run("rewind", conversation.id, "--before", user.id, "--restore-files", "--json");
    expect(rewound).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(rewound.stdout)).toMatchObject({ recordsRemoved: 4, filesRestored: [{ path: "notes.txt", action: "restored" }], filesNotRestored: [], unrestorableCalls: [] });
    expect(await readFile(notes, "utf8")).toBe("line one\nline two\nline three\nline four\n");

    const unrewound = await run("unrewind", conversation.id);
    expect(unrewound).toMatchObject({ code: 0, stderr: "unrewound: 4 records put back\n  restored notes.txt\n" });
    expect(await readFile(notes, "utf8")).toContain("line 2\n");

    fx.fake.enqueue({ kind: "reply", text: ["The user asked to edit notes."], usage: { prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 } });
    const compacted = await run("compact", conversation.id, "--instructions", "keep the file name", "--json");
    expect(compacted).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(compacted.stdout)).toMatchObject({ type: "compaction", trigger: "manual", tokensBefore: 321, tokensAfter: 12, instructions: "keep the file name" });
    expect(JSON.stringify(fx.fake.requests.at(-1)!.messages)).toContain("keep the file name");
  }));
});

describe.concurrent("agentwire chat on a terminal", { timeout: 60_000 }, () => {
  it("asks about each tool call: e edits the arguments in $EDITOR, an unclear answer asks again, y runs it; the answer streams; Ctrl-D ends with exit 0", withAgent(async (setup) => {
    const { fx, workspace } = setup;
    // The "editor" replaces the arguments file, as a person saving in vi would.
    const editor = join(workspace, "edit.sh");
    await writeFile(editor, `#!/bin/sh\nprintf '%s' '{"command":"echo $((5*5))-edited"}' > "$1"\n`, { mode: 0o755 });
    fx.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "call_a", name: "shell", args: '{"command":"echo $((6*7))-marker"}' },
          { id: "call_b", name: "shell", args: '{"command":"echo second-call"}' },
        ],
      },
      { kind: "reply", text: ["All", " done."] },
    );
    const term = runCliInTerminal(["chat", "run echo", "--url", fx.server.url], { EDITOR: editor }, workspace, bundle.entry);
    const question = String.raw`\nRun shell\? \[y\]es / \[n\]o \[reason\] / \[e\]dit / \[a\]uto N(?: / \[A\]lways)?: $`; // [A]lways only for echo second-call: the first has $( ), which cannot be remembered
    // Each question shows the call it is about; the second waits until the first is answered.
    await term.waitFor(new RegExp(String.raw`⚙ Run echo \$\(\(6\*7\)\)-marker · shell \{"command":"echo \$\(\(6\*7\)\)-marker"\}` + question));
    expect(term.output()).not.toContain("second-call");
    term.write("e\r");
    await term.waitFor(new RegExp(String.raw`⚙ Run echo second-call · shell \{"command":"echo second-call"\}` + question));
    term.write("maybe\r");
    await term.waitFor(new RegExp(String.raw`maybe\nAnswer y \(run it\).*` + question));
    term.write("y\r");
    const shown = await term.waitFor(/All done\.\n[\s\S]*> $/);
    expect(shown).toContain('⚙ Run echo $((6*7))-marker · shell {"command":"echo $((6*7))-marker"}');
    expect(shown.match(/✓ shell \(exit 0\)/g)).toHaveLength(2);
    term.write("\x04");
    expect((await term.exited).code).toBe(0);
    const tools = fx.fake.requests[1]!.messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => m.tool_call_id)).toEqual(["call_a", "call_b"]);
    expect(String(tools[0].content)).toContain("25-edited");
    expect(String(tools[0].content)).not.toContain("42-marker");
    expect(String(tools[1].content)).toContain("second-call");
    const { data } = await fx.client.conversation.list({});
    const { records } = await fx.client.conversation.get({ conversationId: data[0]!.id, includeRecords: true });
    expect(records!.find((r) => r.type === "tool_call" && r.toolCallId === "call_a")).toMatchObject({ edited: true, arguments: { command: "echo $((5*5))-edited" } });
  }));

  it("Ctrl-C interrupts a generation (the model stream is aborted), and the command exits 130", withAgent(async (setup) => {
    const { fx, workspace } = setup;
    fx.fake.enqueue({ kind: "reply", text: ["Thinking", " slowly"], hangAfter: 1 });
    const term = runCliInTerminal(["chat", "take your time", "--url", fx.server.url], {}, workspace, bundle.entry);
    await term.waitFor(/Thinking/);
    term.write("\x03");
    await term.waitFor(/\[interrupted while streaming\][\s\S]*> $/);
    await expect(fx.fake.exchanges[0]!.ended).resolves.toBe("client_closed");
    term.write("\x04");
    expect((await term.exited).code).toBe(130);
    const { data } = await fx.client.conversation.list({});
    const { records } = await fx.client.conversation.get({ conversationId: data[0]!.id, includeRecords: true });
    expect(records!.at(-1)).toMatchObject({ role: "assistant", content: "Thinking", interrupted: true });
  }));
});

describe("chat argument parsing", () => {
  const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseCli(argv, { XDG_CONFIG_HOME: "/nonexistent", ...env }, { discover: false });

  it("reads the chat flags; AGENTWIRE_URL stands in for --url; serve keeps refusing chat's flags", () => {
    const parsed = parse(["chat", "hi", "there", "--auto", "3", "--attach", "a.ts:2-5", "--attach", "b:c.md", "--model", "m"], { AGENTWIRE_URL: "ws://127.0.0.1:9" });
    expect(parsed.command).toBe("chat");
    expect(parsed.chat).toMatchObject({
      prompt: "hi there",
      tools: "ask",
      auto: 3,
      model: "m",
      target: { url: "ws://127.0.0.1:9" },
      attachments: [{ path: "a.ts", lines: { start: 2, end: 5 } }, { path: "b:c.md" }],
    });
    const embedded = parse(["chat", "--data-dir", "/tmp/x", "--yes"]).chat!;
    expect(embedded.tools).toBe("yes");
    expect(embedded.target.embedded).toMatchObject({ server: { dataDir: "/tmp/x", port: 0, host: "127.0.0.1", logLevel: "error" } });
    expect(() => parse(["serve", "--yes"])).toThrow(UsageError);
    expect(parse(["conversations", "export", "c_1", "--format", "markdown"]).conversations).toMatchObject({ action: "export", id: "c_1", format: "markdown" });
  });

  it("refuses what cannot work, naming the flag", () => {
    expect(() => parse(["chat", "--yes", "--deny"])).toThrow(/--yes and --deny/);
    expect(() => parse(["chat", "--auto", "x"])).toThrow(/--auto must be an integer/);
    expect(() => parse(["chat", "--url", "http://x"])).toThrow(/--url must be a ws/);
    expect(() => parse(["chat", "--url", "ws://x", "--data-dir", "d"])).toThrow(/--data-dir is for the embedded server/);
    expect(() => parseAttachSpec("a.ts:5-2")).toThrow(/START-END/);
    expect(() => parse(["conversations", "show"])).toThrow(/exactly one conversation ID/);
    expect(() => parse(["conversations", "list", "--format", "markdown"])).toThrow(/--format goes with conversations export/);
    expect(() => parse(["conversations", "frobnicate"])).toThrow(/list, show ID, rm ID, export ID/);
    expect(parse(["conversations", "rewind", "c_1", "--before", "r_9", "--restore-files", "--force"]).conversations).toMatchObject({ action: "rewind", id: "c_1", before: "r_9", restoreFiles: true, force: true });
    expect(parse(["conversations", "compact", "c_1", "--instructions", "keep it"]).conversations).toMatchObject({ action: "compact", instructions: "keep it" });
    expect(() => parse(["conversations", "rewind", "c_1"])).toThrow(/needs --before RECORD_ID/);
    expect(() => parse(["conversations", "show", "c_1", "--restore-files"])).toThrow(/go with conversations rewind/);
    expect(() => parse(["conversations", "rewind", "c_1", "--before", "r_9", "--instructions", "x"])).toThrow(/--instructions goes with conversations compact/);
  });

  it("reads tool answers", () => {
    expect(parseToolAnswer("Y")).toEqual({ action: "confirm" });
    expect(parseToolAnswer(" n ")).toEqual({ action: "skip" });
    expect(parseToolAnswer("e")).toBe("edit");
    expect(parseToolAnswer("a 5")).toEqual({ action: "auto", count: 5 });
    expect(parseToolAnswer("auto")).toBeUndefined();
    expect(parseToolAnswer("A")).toBe("always");
    expect(parseToolAnswer("n because it deletes files")).toEqual({ action: "skip", message: "because it deletes files" });
    expect(parseToolAnswer("no  keep them ")).toEqual({ action: "skip", message: "keep them" });
    expect(parseToolAnswer("")).toBeUndefined();
  });

  it("exports Markdown whose fences survive backticks in the content", () => {
    const md = conversationToMarkdown(
      { id: "c_1", title: "", createdAt: "t0", updatedAt: "t1", model: null, system: null, workspace: null, settings: {} as never, recordCount: 1 },
      [
        { type: "tool_call", id: "r_1", toolCallId: "x", toolName: "shell", arguments: { command: "ls" }, result: "a\n```\nb", success: true, status: "completed", timestamp: "t" },
      ],
    );
    expect(md).toContain("# c_1\n");
    expect(md).toContain("### Tool `shell` — completed");
    expect(md).toContain("````\na\n```\nb\n````");
    expect(stripAnsi("\x1b[1mx\x1b[22m\r\n")).toBe("x\n");
  });
});
