/**
 * Slash commands (issue 24): prompt templates in a temp workspace's
 * `.agentwire/commands/` and a temp XDG config dir, listed by commands.list
 * (malformed ones in `problems`), expanded by message.append { command,
 * arguments } into the text the model receives, the record keeping both.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { expandCommand, splitArguments } from "../../src/skills/expand-command.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { expectInvalidParams } from "../harness/rpc-errors.js";

const FIX_ISSUE_MD = [
  "---",
  "description: Fix a GitHub issue by number.",
  'argument-hint: "<issue> [priority]"',
  "mode: code",
  "---",
  "Fix issue #$1 (priority: $2).",
  "Everything you were told: $ARGUMENTS",
  "",
].join("\n");

let root: string;
let workspace: string;
let xdg: string;
const wsCommand = (name: string) => join(workspace, ".agentwire", "commands", `${name}.md`);
const userCommand = (name: string) => join(xdg, "agentwire", "commands", `${name}.md`);

async function put(path: string, text: string): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, text);
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "agentwire-commands-")));
  workspace = join(root, "ws");
  xdg = join(root, "xdg");
  await put(wsCommand("fix-issue"), FIX_ISSUE_MD);
  await put(wsCommand("review"), "---\ndescription: The workspace's review.\n---\nReview like this project wants.\n");
  await put(wsCommand("unclosed"), "---\ndescription: never closed\nDo things.\n");
  await put(wsCommand("bad.name"), "Hello.\n");
  await put(userCommand("review"), "---\ndescription: The user's review.\n---\nReview my way.\n");
  await put(userCommand("standup"), "Write my standup notes.\n");
  vi.stubEnv("XDG_CONFIG_HOME", xdg);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(root, { recursive: true, force: true });
});

const fx = useAgentFixture();

describe("expansion (unit)", () => {
  it("splits quoted words, fills $ARGUMENTS and $1…$9 in one pass, appends arguments to a template without placeholders", () => {
    expect(splitArguments(` 142 "high priority" 'it''s' a\\b "say \\"hi\\""`)).toEqual(["142", "high priority", "its", "a\\b", 'say "hi"']);
    expect(expandCommand("$1/$2/$3 [$ARGUMENTS] $10", ' 7 "$2 x" ')).toBe('7/$2 x/ [7 "$2 x"] 70');
    expect(expandCommand("Write notes.\n", " about X ")).toBe("Write notes.\n\nabout X");
    expect(expandCommand("Write notes.\n", "")).toBe("Write notes.\n");
  });
});

describe("commands.list", () => {
  it("lists the workspace's and the user's commands (the workspace wins a name) and reports malformed files in problems", async () => {
    const { id } = await newConversation(fx.client, { workspace });
    const result = await fx.client.commands.list({ conversationId: id });
    expect(result.commands).toEqual([
      {
        name: "fix-issue",
        description: "Fix a GitHub issue by number.",
        argumentHint: "<issue> [priority]",
        mode: "code",
        path: wsCommand("fix-issue"),
        source: "workspace",
      },
      { name: "review", description: "The workspace's review.", path: wsCommand("review"), source: "workspace" },
      { name: "standup", description: "", path: userCommand("standup"), source: "user" },
    ]);
    const problems = Object.fromEntries(result.problems.map((p) => [p.path, p.message]));
    expect(Object.keys(problems).sort()).toEqual([wsCommand("bad.name"), wsCommand("unclosed")].sort());
    expect(problems[wsCommand("unclosed")]).toMatch(/not closed/);
    expect(problems[wsCommand("bad.name")]).toMatch(/the name "bad\.name" is not/);
    // The same list for the workspace named directly, before any conversation exists.
    expect((await fx.client.commands.list({ workspace })).commands.map((c) => c.name)).toEqual(["fix-issue", "review", "standup"]);
    await expectInvalidParams(fx.client.commands.list({ workspace: "relative/dir" }), "workspace");
  });
});

describe("message.append { command }", () => {
  it("expands the template: the model receives the expanded text, the record keeps command and arguments", async () => {
    const conversation = await fx.client.conversation.create({ workspace });
    const appended = await fx.client.message.append({
      conversationId: conversation.id,
      role: "user",
      command: "fix-issue",
      arguments: '142 "high priority"',
    });
    const expanded = 'Fix issue #142 (priority: high priority).\nEverything you were told: 142 "high priority"\n';
    expect(appended).toMatchObject({
      role: "user",
      content: expanded,
      command: { name: "fix-issue", arguments: '142 "high priority"', source: "workspace" },
    });
    fx.fake.enqueue({ kind: "reply", text: ["On it."] });
    await fx.client.step({ conversationId: conversation.id });
    await fx.client.generation.wait({ conversationId: conversation.id });
    expect(fx.fake.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: "user", content: expanded });
    const { records } = await fx.client.conversation.get({ conversationId: conversation.id, includeRecords: true });
    expect(records![0]).toMatchObject({ id: appended.id, content: expanded, command: { name: "fix-issue", arguments: '142 "high priority"' } });

    // The user's template of a clashing name is hidden by the workspace's.
    const send = { conversationId: conversation.id, role: "user" as const, command: "review", clientMessageId: "tab-1:1" };
    const review = await fx.client.message.append(send);
    expect(review).toMatchObject({ content: "Review like this project wants.\n", command: { name: "review", arguments: "", source: "workspace" } });
    // A retry repeats the command: the same message; other arguments under the same id are refused.
    expect((await fx.client.message.append(send)).id).toBe(review.id);
    await expectInvalidParams(fx.client.message.append({ ...send, arguments: "more" }), "clientMessageId");
  });

  it("a message held while a generation runs (steer) keeps its expansion and its command", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["Running it."], toolCalls: [{ id: "cmd_1", name: "shell", args: JSON.stringify({ command: "true" }) }] });
    const { id, events } = await newConversation(fx.client, { workspace }, "start");
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForMethod("tool_pending");
    const held = await fx.client.message.append({ conversationId: id, role: "user", command: "standup", arguments: "for Friday" });
    expect(held).toMatchObject({ delivery: "steer", content: "Write my standup notes.\n\nfor Friday", command: { name: "standup", source: "user" } });
    expect((await fx.client.queue.list({ conversationId: id })).messages[0]!.record).toMatchObject({ content: held.content, command: held.command });
    fx.fake.enqueue({ kind: "reply", text: ["Notes written."] });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "cmd_1", action: "confirm" });
    await events.waitForEnd(generationId);
    expect(fx.fake.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: "user", content: "Write my standup notes.\n\nfor Friday" });
  });

  it("refuses an unknown command, content with command, and neither, naming the field", async () => {
    const { id } = await fx.client.conversation.create({ workspace });
    const unknown = await expectInvalidParams(fx.client.message.append({ conversationId: id, role: "user", command: "deploy" }), "command");
    expect(unknown.message).toContain('"deploy"');
    await expectInvalidParams(fx.client.message.append({ conversationId: id, role: "user", content: "hi", command: "review" }), "command");
    await expectInvalidParams(fx.client.message.append({ conversationId: id, role: "user" }), "content");
    await expectInvalidParams(fx.client.message.append({ conversationId: id, role: "user", content: "hi", arguments: "x" }), "arguments");
    await expectInvalidParams(fx.client.message.append({ conversationId: id, role: "system", command: "review" }), "command");
    const { records } = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(records).toEqual([]);
  });
});
