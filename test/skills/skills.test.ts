/**
 * Skills: real folders in a temp workspace and a temp XDG config dir,
 * listed by skills.list (malformed ones in `problems`), named in the
 * model's system prompt, and read by the model through load_skill.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseSkillFrontMatter } from "../../src/skills/skill-front-matter.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { expectNotFound } from "../harness/rpc-errors.js";

const RELEASE_MD = [
  "---",
  "name: release",
  "description: >",
  "  How to cut a release:",
  "  version bump, changelog, tag.",
  "license: MIT",
  "---",
  "# Releasing",
  "1. Bump the version in package.json.",
  "",
].join("\n");

let root: string;
let workspace: string;
let xdg: string;
const wsSkill = (folder: string) => join(workspace, ".agentwire", "skills", folder, "SKILL.md");
const userSkill = (folder: string) => join(xdg, "agentwire", "skills", folder, "SKILL.md");

async function put(path: string, text: string): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, text);
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "agentwire-skills-")));
  workspace = join(root, "ws");
  xdg = join(root, "xdg");
  await put(wsSkill("release"), RELEASE_MD);
  await put(wsSkill("shared"), '---\nname: shared\ndescription: "The workspace\'s version."\n---\nworkspace body\n');
  await put(wsSkill("broken"), "# No front matter here\n");
  await put(wsSkill("nodesc"), "---\nname: nodesc\n---\n");
  await put(wsSkill("badname"), "---\nname: ../etc/passwd\ndescription: sneaky\n---\n");
  await writeFile(join(workspace, ".agentwire", "skills", "README.txt"), "not a skill folder");
  // A workspace skill that is a symlink to a folder outside the workspace is refused.
  await put(join(root, "outside", "SKILL.md"), "---\nname: outside\ndescription: lives elsewhere\n---\n");
  await symlink(join(root, "outside"), join(workspace, ".agentwire", "skills", "escape"));
  await put(userSkill("shared"), "---\nname: shared\ndescription: The user's version.\n---\nuser body\n");
  await put(userSkill("lint"), "---\r\nname: 'lint'\r\ndescription: Run the linters before committing.\r\n---\r\nnpm run lint\r\n");
  vi.stubEnv("XDG_CONFIG_HOME", xdg);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(root, { recursive: true, force: true });
});

const fx = useAgentFixture();

describe("front matter (unit)", () => {
  it("reads name and description: quotes, folded lines, CRLF and a BOM; refuses what lacks them", () => {
    expect(parseSkillFrontMatter(RELEASE_MD)).toEqual({
      ok: true,
      name: "release",
      description: "How to cut a release: version bump, changelog, tag.",
    });
    expect(parseSkillFrontMatter('\uFEFF---\r\nname: "a \\"b\\""\r\ndescription: \'it\'\'s\'\r\n---\r\n')).toEqual({
      ok: true,
      name: 'a "b"',
      description: "it's",
    });
    expect(parseSkillFrontMatter("no front matter")).toMatchObject({ ok: false, problem: expect.stringContaining("front matter") });
    expect(parseSkillFrontMatter("---\nname: x\ndescription: y\n")).toMatchObject({ ok: false, problem: expect.stringContaining("not closed") });
    expect(parseSkillFrontMatter("---\ndescription: y\n---\n")).toMatchObject({ ok: false, problem: expect.stringContaining("no name") });
  });
});

describe("skills.list", () => {
  it("lists the workspace's and the user's skills (the workspace wins a name) and reports malformed ones in problems", async () => {
    const { id } = await newConversation(fx.client, { workspace });
    const result = await fx.client.skills.list({ conversationId: id });
    expect(result.skills).toEqual([
      { name: "lint", description: "Run the linters before committing.", path: userSkill("lint"), source: "user" },
      { name: "release", description: "How to cut a release: version bump, changelog, tag.", path: wsSkill("release"), source: "workspace" },
      { name: "shared", description: "The workspace's version.", path: wsSkill("shared"), source: "workspace" },
    ]);
    const problems = Object.fromEntries(result.problems.map((p) => [p.path, p.message]));
    expect(Object.keys(problems).sort()).toEqual([wsSkill("badname"), wsSkill("broken"), wsSkill("escape"), wsSkill("nodesc")].sort());
    expect(problems[wsSkill("broken")]).toMatch(/front matter/);
    expect(problems[wsSkill("nodesc")]).toMatch(/no description/);
    expect(problems[wsSkill("badname")]).toMatch(/the name "\.\.\/etc\/passwd" is not/);
    expect(problems[wsSkill("escape")]).toMatch(/links outside the workspace/);
  });

  it("without a conversation looks in the server's working directory (here: none) and the user's dir; an unknown conversation is -32010", async () => {
    const result = await fx.client.skills.list({});
    expect(result.skills.map((s) => [s.name, s.source])).toEqual([
      ["lint", "user"],
      ["shared", "user"],
    ]);
    await expectNotFound(fx.client.skills.list({ conversationId: "c_missing" }), "c_missing");
  });
});

describe("skills and the model", () => {
  it("are listed in the system prompt; the model loads one with load_skill and receives the SKILL.md text", async () => {
    fx.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "s1", name: "load_skill", args: JSON.stringify({ name: "release" }) },
          { id: "s2", name: "load_skill", args: JSON.stringify({ name: "outside" }) },
        ],
      },
      { kind: "reply", text: ["Following the release skill."] },
    );
    const { id, events } = await newConversation(fx.client, { workspace }, "cut a release");
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");

    const first = fx.fake.requests[0]!.messages[0] as { role: string; content: string };
    expect(first.role).toBe("system");
    expect(first.content).toContain("call load_skill with its name");
    expect(first.content).toContain("- release: How to cut a release: version bump, changelog, tag.");
    expect(first.content).toContain("- lint: Run the linters before committing.");
    expect(first.content).toContain("- shared: The workspace's version.");
    expect(first.content).not.toContain("The user's version.");
    expect(first.content).not.toContain("outside");

    const answers = (fx.fake.requests[1]!.messages as { role: string; tool_call_id?: string; content: string }[]).filter(
      (m) => m.role === "tool",
    );
    expect(answers).toEqual([
      { role: "tool", tool_call_id: "s1", content: RELEASE_MD },
      { role: "tool", tool_call_id: "s2", content: 'No skill named "outside". Available skills: lint, release, shared.' },
    ]);
    expect(events.of("tool_completed").map((e) => e.record.toolCallId)).toEqual(["s1"]);
    expect(events.of("tool_failed").map((e) => e.record.toolCallId)).toEqual(["s2"]);
  });

  it("load_skill is offered read-only in tools.list", async () => {
    const { tools } = await fx.client.tools.list({});
    expect(tools.find((t) => t.name === "load_skill")).toMatchObject({
      annotations: { readOnlyHint: true, destructiveHint: false },
      source: "builtin",
      parameters: { type: "object", required: ["name"], additionalProperties: false },
    });
  });
});
