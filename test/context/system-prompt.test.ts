/**
 * The system prompt template: each placeholder, unknown placeholders refused
 * (when compiled, in agentwire.json, at server start), and end to end the
 * default template in the system message the model received, which a
 * conversation's own prompt replaces verbatim.
 */
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { platform, release, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT_TEMPLATE } from "../../protocol/config.js";
import { resolveConfig } from "../../src/config/resolve-config.js";
import { ConfigError } from "../../src/server.js";
import { compileSystemPrompt, SystemPromptTemplateError, type PromptValues } from "../../src/context/system-prompt.js";
import { newConversation, startAgentFixture, useAgentFixture } from "../harness/agent-fixture.js";
import { startTestServer } from "../harness/test-server.js";

const values: PromptValues = {
  workspace: "/srv/project",
  date: "2026-11-23",
  os: "linux 6.1.0",
  tools: ["shell", "load_skill"],
  skills: [
    { name: "release", description: "How to cut a release." },
    { name: "db-migrate", description: "Write a database migration." },
  ],
};

describe("rendering (unit)", () => {
  it("fills each placeholder, spaces inside the braces allowed, text around kept", () => {
    const render = (t: string, v: Partial<PromptValues> = {}) => compileSystemPrompt(t).render({ ...values, ...v });
    expect(render("at {{workspace}}.")).toBe("at /srv/project.");
    expect(render("on {{ date }}")).toBe("on 2026-11-23");
    expect(render("os={{os}}")).toBe("os=linux 6.1.0");
    expect(render("tools: {{tools}}")).toBe("tools: shell, load_skill");
    expect(render("tools: {{tools}}", { tools: [] })).toBe("tools: none");
    const skills = render("{{skills}}");
    expect(skills).toContain("call load_skill with its name");
    expect(skills).toContain("- release: How to cut a release.");
    expect(skills).toContain("- db-migrate: Write a database migration.");
    // Without load_skill on offer the prompt does not point at it.
    expect(render("{{skills}}", { tools: ["shell"] })).not.toContain("call load_skill");
    // No skills: the placeholder vanishes, and so does the blank line it leaves at the end.
    expect(render("Hi.\n{{skills}}", { skills: [] })).toBe("Hi.");
    // A single brace or unclosed braces are text.
    expect(render("{x} {{ and }")).toBe("{x} {{ and }");
  });

  it("renders again from one template whenever a value it reads changed, and only then", () => {
    const template = compileSystemPrompt(DEFAULT_SYSTEM_PROMPT_TEMPLATE);
    const tools = [...values.tools];
    const skills = values.skills.map((s) => ({ ...s }));
    const first = template.render({ ...values, tools, skills });
    expect(first).toContain("- release: How to cut a release.");
    // The same values in new arrays: the same text.
    expect(template.render({ ...values, tools: [...tools], skills: skills.map((s) => ({ ...s })) })).toBe(first);
    // The caller's arrays changed in place after the render: what was rendered before is not what they say now.
    tools.push("update_plan");
    skills[0]!.description = "Cut it carefully.";
    const changed = template.render({ ...values, tools, skills });
    expect(changed).toContain("update_plan");
    expect(changed).toContain("- release: Cut it carefully.");
    expect(changed).toContain("keep a plan with update_plan");
    expect(template.render(values)).toBe(first);
    expect(template.render({ ...values, date: "2026-11-24" })).toBe(first.replace("2026-11-23", "2026-11-24"));
    expect(template.render({ ...values, workspace: "/srv/other" })).toContain("/srv/other");
    expect(template.render({ ...values, os: "linux 6.2.0" })).toContain("linux 6.2.0");
    expect(template.render({ ...values, skills: [] })).not.toContain("release");
    expect(template.render({ ...values, tools: ["shell"] })).toContain("no tool to load them");
    // A value the template does not read changes nothing.
    const dateOnly = compileSystemPrompt("{{date}}");
    expect(dateOnly.render(values)).toBe("2026-11-23");
    expect(dateOnly.render({ ...values, tools: [], workspace: "/x" })).toBe("2026-11-23");
  });

  it("says which placeholders a template uses (skills are only looked up when used)", () => {
    expect([...compileSystemPrompt("{{date}} {{tools}} {{date}}").uses].sort()).toEqual(["date", "tools"]);
    expect(compileSystemPrompt("plain").uses.size).toBe(0);
    expect(compileSystemPrompt(DEFAULT_SYSTEM_PROMPT_TEMPLATE).uses).toEqual(new Set(["workspace", "os", "date", "tools", "skills", "plan"]));
  });

  it("refuses unknown placeholders, naming each and the known ones", () => {
    expect(() => compileSystemPrompt("Hi {{user}} in {{workspace}} {{ Date }}")).toThrow(SystemPromptTemplateError);
    expect(() => compileSystemPrompt("Hi {{user}} in {{workspace}} {{ Date }}")).toThrow(
      /conversations\.systemPrompt: unknown placeholders \{\{user\}\}, \{\{Date\}\} \(known: \{\{workspace\}\}, \{\{date\}\}, \{\{os\}\}, \{\{tools\}\}, \{\{skills\}\}, \{\{plan\}\}\)/,
    );
    expect(() => compileSystemPrompt("{{}}")).toThrow(/unknown placeholder \{\{\}\}/);
  });
});

describe("configuration", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agentwire-prompt-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("agentwire.json conversations.systemPrompt reaches the configuration; an unknown placeholder names the file and key", async () => {
    const file = join(dir, "agentwire.json");
    await writeFile(file, JSON.stringify({ conversations: { systemPrompt: "Work in {{workspace}}." } }));
    expect(resolveConfig({ cwd: dir, env: {}, home: dir, explicitFile: file, discover: false }).config.conversations.systemPrompt).toBe(
      "Work in {{workspace}}.",
    );
    await writeFile(file, JSON.stringify({ conversations: { systemPrompt: "Hi {{name}}" } }));
    expect(() => resolveConfig({ cwd: dir, env: {}, home: dir, explicitFile: file, discover: false })).toThrow(
      /agentwire\.json.*conversations\.systemPrompt.*unknown placeholder \{\{name\}\}/s,
    );
  });

  it("a server given a template with an unknown placeholder does not start", async () => {
    await expect(startTestServer({ conversations: { systemPrompt: "{{whoami}}" } })).rejects.toThrow(ConfigError);
    await expect(startTestServer({ conversations: { systemPrompt: "{{whoami}}" } })).rejects.toThrow(/conversations.systemPrompt: unknown placeholder \{\{whoami\}\}/);
  });
});

describe("end to end", () => {
  const fx = useAgentFixture();

  it("a conversation without a system prompt gets the default template: workspace, date, OS and the tool names", async () => {
    const workspace = await realpath(await mkdtemp(join(tmpdir(), "agentwire-ws-")));
    try {
      fx.fake.enqueue({ kind: "reply", text: ["ok"] });
      const { id, events } = await newConversation(fx.client, { workspace });
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitForEnd(generationId);
      const [system, user] = fx.fake.requests[0]!.messages as { role: string; content: string }[];
      expect(user).toEqual({ role: "user", content: "hello" });
      expect(system.role).toBe("system");
      expect(system.content).toContain(`workspace ${workspace} on ${platform()} ${release()}`);
      expect(system.content).toContain(`Today is ${new Date().toISOString().slice(0, 10)}.`);
      // The names are those offered in the same request.
      const offered = (fx.fake.requests[0]!.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
      expect(offered).toEqual(expect.arrayContaining(["shell", "read_file", "load_skill"]));
      expect(system.content).toContain(`Use your tools (${offered.join(", ")})`);
      expect(system.content).not.toMatch(/\{\{|\}\}/);
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });

  it("a conversation's own system prompt is sent verbatim instead, braces and all", async () => {
    fx.fake.enqueue({ kind: "reply", text: ["ok"] });
    const { id, events } = await newConversation(fx.client, { system: "Answer in {{language}}." });
    await events.waitForEnd((await fx.client.step({ conversationId: id })).generationId);
    expect(fx.fake.requests[0]!.messages[0]).toEqual({ role: "system", content: "Answer in {{language}}." });
    expect(fx.fake.requests[0]!.messages.filter((m: { role: string }) => m.role === "system")).toHaveLength(1);
  });

  it("a configured template is rendered per call; an empty one sends no system message", async () => {
    const custom = await startAgentFixture({ config: { conversations: { systemPrompt: "Tools: {{tools}}. Date: {{date}}." } } });
    const none = await startAgentFixture({ config: { conversations: { systemPrompt: "" } } });
    try {
      custom.fake.enqueue({ kind: "reply", text: ["ok"] });
      const a = await newConversation(custom.client);
      await a.events.waitForEnd((await custom.client.step({ conversationId: a.id })).generationId);
      const offered = (custom.fake.requests[0]!.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
      expect(offered).toContain("load_skill");
      expect(custom.fake.requests[0]!.messages[0]).toEqual({
        role: "system",
        content: `Tools: ${offered.join(", ")}. Date: ${new Date().toISOString().slice(0, 10)}.`,
      });

      none.fake.enqueue({ kind: "reply", text: ["ok"] });
      const b = await newConversation(none.client);
      await b.events.waitForEnd((await none.client.step({ conversationId: b.id })).generationId);
      expect(none.fake.requests[0]!.messages).toEqual([{ role: "user", content: "hello" }]);
    } finally {
      await custom.close();
      await none.close();
    }
  });
});
