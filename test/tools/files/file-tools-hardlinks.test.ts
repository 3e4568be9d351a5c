/**
 * Hard links: a name inside the workspace for a file outside it. No path
 * check can see it (the path is inside and has no symlink), so the file
 * tools and file attachments refuse a regular file with more than one link
 * unless `tools.files.allowHardLinks` is set — with real hard links, the
 * real config file, and a real server for the attachment and tool paths.
 */
import { link, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_FILE_ATTACHMENT_BYTES } from "../../../protocol/index.js";
import { readWorkspaceText } from "../../../src/attachments/workspace-file.js";
import { parseCli } from "../../../src/cli-options.js";
import { createFileTools } from "../../../src/tools/files/file-tools.js";
import type { Tool, ToolResult } from "../../../src/tools/tool.js";
import { newConversation, startAgentFixture } from "../../harness/agent-fixture.js";
import { rpcError } from "../../harness/rpc-errors.js";

let base: string;
let ws: string;
let outside: string;
const SECRET = "OUTSIDE SECRET\n";

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "agentwire-hardlink-")));
  ws = join(base, "ws");
  outside = join(base, "outside");
  await mkdir(ws);
  await mkdir(outside);
  await writeFile(join(outside, "secret.txt"), SECRET);
  await link(join(outside, "secret.txt"), join(ws, "linked.txt"));
  await writeFile(join(ws, "plain.txt"), "plain\n");
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

function call(allowHardLinks: boolean, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const tool = createFileTools({ allowHardLinks }).find((t) => t.name === name) as Tool;
  return tool.run(args, { cwd: ws, conversationId: "c_links", signal: new AbortController().signal, timeoutMs: 10_000, onOutput: () => {} });
}

const refusal = /"linked\.txt" has 2 hard links: another name of the same file may be outside the workspace, so it is refused \(set tools\.files\.allowHardLinks to allow hard-linked files\)/;

describe("a hard link to a file outside the workspace", () => {
  it("is refused by read_file, edit_file and write_file; search_files skips it and says so; the outside file is untouched", async () => {
    const read = await call(false, "read_file", { path: "linked.txt" });
    expect(read).toMatchObject({ success: false, output: expect.stringMatching(refusal) });
    expect(read.output).not.toContain("OUTSIDE");
    expect(await call(false, "edit_file", { path: "linked.txt", old_string: "SECRET", new_string: "gone" })).toMatchObject({ success: false, output: expect.stringMatching(refusal) });
    expect(await call(false, "write_file", { path: "linked.txt", content: "replaced\n" })).toMatchObject({ success: false, output: expect.stringMatching(refusal) });
    const search = await call(false, "search_files", { pattern: "SECRET|plain" });
    expect(search.output).toBe("plain.txt:1:plain\n[1 hard-linked file skipped (set tools.files.allowHardLinks to search them)]");
    // Listing shows names only: the link is listed.
    expect((await call(false, "list_files", {})).output).toBe("linked.txt\nplain.txt");
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe(SECRET);
    expect(await readdir(ws)).toEqual(["linked.txt", "plain.txt"]);
  });

  it("is refused as a file attachment", async () => {
    await expect(readWorkspaceText(ws, "linked.txt", undefined, MAX_FILE_ATTACHMENT_BYTES, { allowHardLinks: false })).rejects.toMatchObject({
      field: "path",
      message: expect.stringMatching(refusal),
    });
    await expect(readWorkspaceText(ws, "linked.txt", { start: 1, end: 1 }, MAX_FILE_ATTACHMENT_BYTES, { allowHardLinks: false })).rejects.toThrow(refusal);
  });

  it("is read, searched and attached when tools.files.allowHardLinks is true", async () => {
    expect((await call(true, "read_file", { path: "linked.txt" })).output).toBe("     1\tOUTSIDE SECRET");
    expect((await call(true, "search_files", { pattern: "SECRET" })).output).toBe("linked.txt:1:OUTSIDE SECRET");
    expect((await readWorkspaceText(ws, "linked.txt", undefined, MAX_FILE_ATTACHMENT_BYTES, { allowHardLinks: true })).content).toBe(SECRET);
  });
});

describe("tools.files.allowHardLinks", () => {
  it("is read from agentwire.json (default false)", async () => {
    const xdg = join(base, "xdg");
    const project = join(base, "project");
    await mkdir(join(xdg, "agentwire"), { recursive: true });
    await mkdir(project, { recursive: true });
    const serve = () => parseCli(["serve"], { XDG_CONFIG_HOME: xdg, HOME: base }, { cwd: project }).config!;
    expect(serve().tools.files.allowHardLinks).toBe(false);
    await writeFile(join(xdg, "agentwire", "agentwire.json"), `{ "tools": { "files": { "allowHardLinks": true } } }`);
    expect(serve().tools.files.allowHardLinks).toBe(true);
    await writeFile(join(xdg, "agentwire", "agentwire.json"), `{ "tools": { "files": { "allowHardLinks": "yes" } } }`);
    expect(() => serve()).toThrow(/tools\.files\.allowHardLinks/);
  });

  it("reaches message.append's attachments and the file tools of a running server", { timeout: 20_000 }, async () => {
    for (const allowHardLinks of [false, true]) {
      const fx = await startAgentFixture({ config: { tools: { files: { allowHardLinks } } } });
      try {
        const attach = { type: "file" as const, path: "linked.txt" };
        const conversation = await fx.client.conversation.create({ workspace: ws });
        const appended = fx.client.message.append({ conversationId: conversation.id, role: "user", content: "see", attachments: [attach] });
        if (allowHardLinks) expect((await appended).attachments).toEqual([{ ...attach, content: SECRET }]);
        else expect((await rpcError(appended)).message).toMatch(refusal);

        fx.fake.enqueue(
          { kind: "reply", toolCalls: [{ id: "call_read", name: "read_file", args: JSON.stringify({ path: "linked.txt" }) }] },
          { kind: "reply", text: ["Done."] },
        );
        const { id, events } = await newConversation(fx.client, { workspace: ws });
        const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
        await events.waitForEnd(generationId);
        const result = [...events.of("tool_completed"), ...events.of("tool_failed")][0]!.record;
        if (allowHardLinks) expect(result).toMatchObject({ success: true, result: "     1\tOUTSIDE SECRET" });
        else expect(result).toMatchObject({ success: false, result: expect.stringMatching(refusal) });
      } finally {
        await fx.close();
      }
    }
  });
});
