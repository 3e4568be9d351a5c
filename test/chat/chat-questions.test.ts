/**
 * `agentwire chat` and issue 24's client parts, as real child processes
 * against the fake model: questions (ask_user) answered on a pseudo-terminal
 * by number and as a hidden secret, and declined at once without one;
 * --mode and /mode, checked in the tools the model is offered; a sub-agent's
 * tool call confirmed at the chat prompt.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeChatBody } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { withChatAgent } from "../harness/chat-agent.js";
import { killAllCliIo, runCliInTerminal, runCliWithInput, stripAnsi } from "../harness/cli-io.js";
import { shippedBundle } from "../harness/shipped-bundle.js";
import { parseChoices, parseField } from "../../src/chat/input-prompt.js";

let entry: string;
beforeAll(() => {
  entry = shippedBundle();
});
afterAll(async () => {
  await killAllCliIo();
});

const ask = (id: string, args: Record<string, unknown>) => ({ kind: "reply" as const, toolCalls: [{ id, name: "ask_user", args: JSON.stringify(args) }] });
const say = (text: string) => ({ kind: "reply" as const, text: [text] });
const offered = (request: FakeChatBody) => (request.tools ?? []).map((t: any) => t.function?.name ?? t.name);
/** The tool result the model read for a call. */
const toolResult = (messages: { role: string; content: unknown; tool_call_id?: string }[], id: string) =>
  String(messages.find((m) => m.role === "tool" && m.tool_call_id === id)?.content);

describe.concurrent("agentwire chat: questions, modes, sub-agents", { timeout: 60_000 }, () => {
  it("a question's choices are picked by number; a secret is typed without echo; a form is asked field by field; all reach the model", withChatAgent(async ({ fx, workspace }) => {
    fx.fake.enqueue(
      ask("call_colour", { question: "Which colour?", choices: ["red", "green", "blue"] }),
      ask("call_token", { question: "Your deploy token?", secret: true }),
      ask("call_form", {
        question: "Where to deploy?",
        schema: {
          type: "object",
          properties: { port: { type: "integer", title: "Port" }, tls: { type: "boolean" }, env: { type: "string", enum: ["dev", "prod"] }, note: { type: "string" } },
          required: ["port", "env"],
        },
      }),
      say("All set."),
    );
    const term = runCliInTerminal(["chat", "set it up", "--url", fx.server.url], {}, workspace, entry);
    const shown = await term.waitFor(/number \(1-3\): $/);
    expect(shown).toContain("? the agent asks: Which colour?");
    expect(shown).toMatch(/ 1\. red\n\s+2\. green\n\s+3\. blue\n/);
    term.write("7\r");
    await term.waitFor(/7 is not a choice: a number from 1 to 3\n[\s\S]*number \(1-3\): $/);
    term.write("2\r");
    await term.waitFor(/Your deploy token\?[\s\S]*secret: $/);
    term.write("tok-s3cr3t-42\r");
    // A form, field by field: a number parsed (and refused when it is not one), y/n, an enum by number, an optional field left empty.
    await term.waitFor(/Where to deploy\?[\s\S]*Port \(port\) \[integer; required\][\s\S]*port: $/);
    term.write("eighty\r");
    await term.waitFor(/eighty is not a number\n[\s\S]*port: $/);
    term.write("8080\r");
    await term.waitFor(/tls: $/);
    term.write("y\r");
    await term.waitFor(/1\. dev\n\s+2\. prod\n[\s\S]*env: $/);
    term.write("2\r");
    await term.waitFor(/note: $/);
    term.write("\r");
    await term.waitFor(/All set\.\n[\s\S]*> $/);
    term.write("\x04");
    expect((await term.exited).code).toBe(0);
    expect(toolResult(fx.fake.requests[1]!.messages, "call_colour")).toContain("green");
    // The model reads the secret in the generation that asked; the terminal never showed it.
    expect(toolResult(fx.fake.requests[2]!.messages, "call_token")).toContain("tok-s3cr3t-42");
    expect(stripAnsi(term.output())).not.toContain("tok-s3cr3t");
    expect(JSON.parse(toolResult(fx.fake.requests[3]!.messages, "call_form"))).toEqual({ port: 8080, tls: true, env: "prod" });
  }));

  it("a one-shot --json run declines a question at once: the input_requested line, the decline, a note on stderr, exit 0", withChatAgent(async ({ fx, workspace }) => {
    fx.fake.enqueue(ask("call_q", { question: "Which branch?" }), say("I will pick main."));
    const run = runCliWithInput(["chat", "--json", "deploy", "--url", fx.server.url], "", {}, workspace, entry);
    expect((await run.exited).code).toBe(0);
    const lines = run.output().trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.find((l) => l.method === "input_requested")?.params).toMatchObject({ question: "Which branch?", source: "ask_user" });
    expect(lines.find((l) => l.method === "input.respond")?.result).toEqual({ outcome: "declined" });
    expect(lines.at(-1)).toMatchObject({ type: "end", outcome: "completed" });
    expect(run.stderr()).toContain("the agent asks: Which branch? — declined: no terminal to answer on");
    expect(toolResult(fx.fake.requests[1]!.messages, "call_q")).toContain("declined");
  }));

  it("--mode plan offers no write_file; /mode lists the modes with plan marked, /mode code switches; an unknown --mode fails naming the valid ones", withChatAgent(async ({ fx, workspace }) => {
    fx.fake.enqueue(say("Here is the plan."), say("Writing now."));
    const term = runCliInTerminal(["chat", "--mode", "plan", "plan it", "--url", fx.server.url], {}, workspace, entry);
    await term.waitFor(/Here is the plan\.\n[\s\S]*plan> $/);
    expect(offered(fx.fake.requests[0]!)).not.toContain("write_file");
    term.write("/mode\r");
    const listed = await term.waitFor(/\* plan\s+Explore[\s\S]*plan> $/);
    expect(listed).toMatch(/\n\s+code\s+The default/);
    term.write("/mode code\r");
    await term.waitFor(/mode: code \(from the next model call\)\n(?:[\s\S]*\n)?> $/);
    term.write("now write it\r");
    await term.waitFor(/Writing now\.\n[\s\S]*> $/);
    expect(offered(fx.fake.requests[1]!)).toContain("write_file");
    term.write("\x04");
    expect((await term.exited).code).toBe(0);

    const bad = runCliWithInput(["chat", "--mode", "nosuch", "hi", "--url", fx.server.url], "", {}, workspace, entry);
    expect((await bad.exited).code).toBe(1);
    expect(bad.stderr()).toContain('unknown mode "nosuch" (valid: ask, plan, code, auto');
  }));

  it("a question left open is asked when chat attaches (state.pendingInputs); answered elsewhere, the prompt is put away with a note", withChatAgent(async ({ fx, workspace }) => {
    fx.fake.enqueue(ask("call_pick", { question: "Which one?", choices: ["this", "that"] }), say("Went with that."));
    const { id, events } = await newConversation(fx.client, { workspace }, "choose");
    const { generationId } = await fx.client.step({ conversationId: id });
    const { params } = await events.waitForMethod("input_requested");
    const term = runCliInTerminal(["chat", "--conversation", id, "--url", fx.server.url], {}, workspace, entry);
    await term.waitFor(/\? the agent asks: Which one\?[\s\S]*number \(1-2\): $/);
    await fx.client.input.respond({ conversationId: id, requestId: params.requestId, answer: "that" });
    await term.waitFor(/\(the question was answered elsewhere or ended\)\n/);
    await events.waitForEnd(generationId);
    term.write("\x04");
    expect((await term.exited).code).toBe(0);
    expect(toolResult(fx.fake.requests[1]!.messages, "call_pick")).toContain("that");
  }));

  it("a sub-agent's tool call is asked at the chat prompt, labelled, and runs when confirmed", withChatAgent(async ({ fx, workspace }) => {
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_spawn", name: "spawn_agent", args: JSON.stringify({ prompt: "Say hi with the shell." }) }] },
      { kind: "reply", toolCalls: [{ id: "call_child", name: "shell", args: JSON.stringify({ command: "echo hi-from-child" }) }] },
      say("The child said hi."),
      say("Delegated and done."),
    );
    const term = runCliInTerminal(["chat", "delegate it", "--url", fx.server.url], {}, workspace, entry);
    await term.waitFor(/Run spawn_agent\?[^\n]*$/);
    term.write("y\r");
    const asked = await term.waitFor(/sub-agent c_\S+ \(its call; the parent waits for it\)\n[\s\S]*Run shell\?[^\n]*$/);
    expect(asked).toMatch(/⤷ sub-agent started: conversation c_\S+ \(depth 1\)/);
    term.write("y\r");
    await term.waitFor(/Delegated and done\.\n[\s\S]*> $/);
    term.write("\x04");
    expect((await term.exited).code).toBe(0);
    expect(toolResult(fx.fake.requests[2]!.messages, "call_child")).toContain("hi-from-child");
    expect(toolResult(fx.fake.requests[3]!.messages, "call_spawn")).toContain("The child said hi.");
  }));

  it("with --yes and no terminal, a sub-agent's tool call runs like the parent's: the run ends", withChatAgent(async ({ fx, workspace }) => {
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_spawn", name: "spawn_agent", args: JSON.stringify({ prompt: "Say hi with the shell." }) }] },
      { kind: "reply", toolCalls: [{ id: "call_child", name: "shell", args: JSON.stringify({ command: "echo hi-from-child" }) }] },
      say("The child said hi."),
      say("Delegated and done."),
    );
    const run = runCliWithInput(["chat", "--yes", "delegate it", "--url", fx.server.url], "", {}, workspace, entry);
    expect((await run.exited).code).toBe(0);
    expect(run.output()).toContain("Delegated and done.");
    expect(run.stderr()).toMatch(/⤷ sub-agent started: conversation c_\S+ \(depth 1\)/);
    expect(toolResult(fx.fake.requests[2]!.messages, "call_child")).toContain("hi-from-child");
  }));
});

describe("reading answers", () => {
  it("choices by number (several with multiple, a choice typed out is taken); form fields typed", () => {
    expect(parseChoices("2", ["a", "b"], false)).toEqual({ answer: "b" });
    expect(parseChoices("2, 1,2", ["a", "b"], true)).toEqual({ answer: ["b", "a"] });
    expect(parseChoices("a", ["a", "b"], false)).toEqual({ answer: "a" });
    expect(parseChoices("1,2", ["a", "b"], false)).toEqual({ problem: "pick one number" });
    expect(parseField("8080", { type: "integer", maximum: 9000 })).toEqual({ value: 8080 });
    expect(parseField("1.5", { type: "integer" })).toBe("1.5 is not a whole number");
    expect(parseField("y", { type: "boolean" })).toEqual({ value: true });
    expect(parseField("maybe", { type: "boolean" })).toBe("answer y or n");
    expect(parseField("2", { type: "string", enum: ["dev", "prod"] })).toEqual({ value: "prod" });
    expect(parseField("", { type: "string" })).toEqual({ value: undefined });
  });
});
