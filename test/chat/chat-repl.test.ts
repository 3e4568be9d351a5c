/**
 * The interactive `agentwire chat` on a real pseudo-terminal: a line typed
 * while the agent works is steered into the running generation, `/queue TEXT`
 * runs after it; `/compact`, `/rewind` (restoring files) and `/unrewind`.
 * Asserted on what the fake model received and on the workspace's files.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withChatAgent } from "../harness/chat-agent.js";
import { killAllCliIo, runCliInTerminal } from "../harness/cli-io.js";
import { shippedBundle } from "../harness/shipped-bundle.js";

let entry: string;
beforeAll(() => {
  entry = shippedBundle();
});
afterAll(async () => {
  await killAllCliIo();
});

const lastUser = (messages: { role: string; content: unknown }[]) => messages.filter((m) => m.role === "user").at(-1)?.content;

describe.concurrent("agentwire chat on a terminal: steer, queue, rewind, compact", { timeout: 60_000 }, () => {
  it("a line typed while the answer streams is steered into that generation; /queue TEXT runs as a turn of its own after it", withChatAgent(async ({ fx, workspace }) => {
    fx.fake.enqueue(
      { kind: "reply", text: ["Working", " on", " it", " step", " by", " step", " and", " then", " some", "."], delayMs: 150 },
      { kind: "reply", text: ["Noted."] },
      { kind: "reply", text: ["Docs", " done."] },
    );
    const term = runCliInTerminal(["chat", "start work", "--url", fx.server.url], {}, workspace, entry);
    await term.waitFor(/Working/);
    term.write("also check the tests\r");
    await term.waitFor(/steered: it joins at the next model call/);
    term.write("/queue then write the docs\r");
    await term.waitFor(/queued \(1 waiting\)/);
    const shown = await term.waitFor(/Docs done\.\n[\s\S]*> $/);
    expect(shown).toContain("↳ steered: also check the tests");
    expect(shown).toContain("↳ queued message taken: then write the docs");
    term.write("\x04");
    expect((await term.exited).code).toBe(0);
    // The steered line joined the first generation (one more model call for it); the queued one started the next.
    expect(fx.fake.requests).toHaveLength(3);
    expect(lastUser(fx.fake.requests[0]!.messages)).toBe("start work");
    expect(lastUser(fx.fake.requests[1]!.messages)).toBe("also check the tests");
    expect(lastUser(fx.fake.requests[2]!.messages)).toBe("then write the docs");
    expect(fx.fake.requests[2]!.messages.map((m) => m.content)).toContain("Noted.");
  }));

  it("/help lists the commands; /compact prints the token figures; /rewind with restore undoes an edit_file; /unrewind puts it back", withChatAgent(async ({ fx, workspace }) => {
    const notes = join(workspace, "notes.txt");
    const before = await readFile(notes, "utf8");
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_edit", name: "edit_file", args: JSON.stringify({ path: "notes.txt", old_string: "line two", new_string: "line 2" }) }] },
      { kind: "reply", text: ["Edited."] },
      { kind: "reply", text: ["The user had notes.txt edited."], usage: { prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 } },
    );
    const term = runCliInTerminal(["chat", "edit notes", "--yes", "--url", fx.server.url], {}, workspace, entry);
    await term.waitFor(/Edited\.\n[\s\S]*> $/);
    expect(await readFile(notes, "utf8")).toContain("line 2\n");

    term.write("/help\r");
    await term.waitFor(/\/unrewind\s+put the last rewind back\n[\s\S]*> $/);
    term.write("/compact keep the file name\r");
    await term.waitFor(/compacted: 321 → 12 tokens\n[\s\S]*> $/);
    expect(JSON.stringify(fx.fake.requests[2]!.messages)).toContain("keep the file name");

    term.write("/rewind\r");
    await term.waitFor(/rewinding to before: edit notes\n[\s\S]*restore files\? \[y\/N\] $/);
    term.write("y\r");
    await term.waitFor(/rewound: \d+ records taken back\n\s+restored notes\.txt\n[\s\S]*> $/);
    expect(await readFile(notes, "utf8")).toBe(before);

    term.write("/unrewind\r");
    await term.waitFor(/unrewound: \d+ records put back\n\s+restored notes\.txt\n[\s\S]*> $/);
    expect(await readFile(notes, "utf8")).toContain("line 2\n");
    term.write("\x04");
    expect((await term.exited).code).toBe(0);
  }));

  it("a workspace template sent as /NAME ARGS reaches the model expanded; [A]lways then c runs the next same-prefix shell call without asking; n REASON reaches the model", withChatAgent(async ({ fx, workspace }) => {
    await mkdir(join(workspace, ".agentwire", "commands"), { recursive: true });
    await writeFile(join(workspace, ".agentwire", "commands", "check.md"), "---\ndescription: Check the notes\nargument-hint: <what>\n---\nPlease check $ARGUMENTS now.\n");
    const shell = (id: string, command: string) => ({ kind: "reply" as const, toolCalls: [{ id, name: "shell", args: JSON.stringify({ command }) }] });
    fx.fake.enqueue(
      shell("call_1", "echo first"),
      shell("call_2", "echo second"),
      shell("call_3", "rm notes.txt"),
      { kind: "reply", text: ["Kept", " it."] },
      { kind: "reply", text: ["Checked", " again."] },
    );
    // The prompt "/check x" names a workspace template: sent as message.append { command, arguments }.
    const term = runCliInTerminal(["chat", "/check the notes", "--url", fx.server.url], {}, workspace, entry);
    await term.waitFor(/Run shell\? \[y\]es \/ \[n\]o \[reason\] \/ \[e\]dit \/ \[a\]uto N \/ \[A\]lways: $/);
    term.write("A\r");
    await term.waitFor(/Always allow `echo`-like shell commands for this \[c\]onversation or this \[w\]orkspace\? \(Enter: back\) $/);
    term.write("c\r");
    // echo second runs without a question; rm is asked about.
    const asked = await term.waitFor(/⚙ Run rm notes\.txt[^\n]*\nRun shell\?[^\n]*$/);
    expect(asked.match(/Run shell\?/g)).toHaveLength(2);
    term.write("n because the notes are still needed\r");
    await term.waitFor(/Kept it\.\n[\s\S]*> $/);
    expect(lastUser(fx.fake.requests[0]!.messages)).toBe("Please check the notes now.\n");
    const skipped = fx.fake.requests[3]!.messages.find((m) => m.role === "tool" && m.tool_call_id === "call_3");
    expect(String(skipped!.content)).toContain("because the notes are still needed");
    expect(await readFile(join(workspace, "notes.txt"), "utf8")).toContain("line one");

    term.write("/help\r");
    await term.waitFor(/\/check <what>\s+Check the notes\n[\s\S]*> $/);
    term.write("/nosuch\r");
    await term.waitFor(/unknown command \/nosuch \(\/help lists them\)\n[\s\S]*> $/);
    term.write("/check again please\r");
    await term.waitFor(/Checked again\.\n[\s\S]*> $/);
    expect(lastUser(fx.fake.requests[4]!.messages)).toBe("Please check again please now.\n");
    term.write("\x04");
    expect((await term.exited).code).toBe(0);
    const { data } = await fx.client.conversation.list({});
    const { conversation } = await fx.client.conversation.get({ conversationId: data[0]!.id });
    expect(conversation.settings?.approvalRules).toEqual([{ tool: "shell", prefix: "echo" }]);
  }));
});
