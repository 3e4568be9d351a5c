/**
 * Tool display: every tool spec (tools.list) carries a kind and a title, and
 * every tool_pending / tool_executing a kind, a short human title and the
 * workspace files the call touches — derived from the arguments by the
 * built-in tools, declared by custom tools, mapped from an MCP tool's
 * annotations — so a client can render a call without knowing the tool.
 * Through the protocol against the fake model endpoint, plus the bounds of
 * src/tools/tool-display.ts as units.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { MAX_TOOL_LOCATIONS, MAX_TOOL_TITLE_CHARS, ToolKind } from "../../protocol/index.js";
import { boundedTitle, kindFromAnnotations, toolCallDisplay, toolDisplay } from "../../src/tools/tool-display.js";
import type { Tool } from "../../src/tools/tool.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { startMcpAgent, stdioFixture, type McpAgent } from "../fixtures/mcp/mcp-fixture.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-tool-display-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("built-in, web and custom tools through the protocol", () => {
  const fx = useAgentFixture({
    config: {
      tools: {
        web: { fetch: { enabled: true } },
        custom: [
          { name: "git_status", description: "Show the working tree status.", command: "git status --short", readOnly: true, kind: "read" },
          { name: "deploy", description: "Deploy.", command: "echo deploying" },
        ],
      },
    },
  });

  it("tools.list gives every tool a kind (ACP's names) and a title", async () => {
    const { tools } = await fx.client.tools.list();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const tool of tools) {
      expect(ToolKind.options).toContain(tool.kind);
      expect(tool.title.length).toBeGreaterThan(0);
    }
    expect(byName.get("shell")).toMatchObject({ kind: "execute", title: "Run command" });
    expect(byName.get("read_file")).toMatchObject({ kind: "read", title: "Read file" });
    expect(byName.get("search_files")).toMatchObject({ kind: "search" });
    expect(byName.get("edit_file")).toMatchObject({ kind: "edit", title: "Edit file" });
    expect(byName.get("web_fetch")).toMatchObject({ kind: "fetch" });
    expect(byName.get("update_plan")).toMatchObject({ kind: "think", title: "Update plan" });
    // A custom tool's declared kind; undeclared, a command runs: execute.
    expect(byName.get("git_status")).toMatchObject({ kind: "read", title: "git_status", source: "custom" });
    expect(byName.get("deploy")).toMatchObject({ kind: "execute", source: "custom" });
  });

  it("a shell call: kind execute and a Run title on tool_pending, and tool_executing follows edited arguments", async () => {
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_sh", name: "shell", args: JSON.stringify({ command: "npm test" }) }] },
      { kind: "reply", text: ["ok"] },
    );
    const { id, events } = await newConversation(fx.client, { workspace: dir });
    const { generationId } = await fx.client.step({ conversationId: id });
    const pending = (await events.waitForMethod("tool_pending")).params;
    expect(pending).toMatchObject({ toolName: "shell", kind: "execute", title: "Run npm test", locations: [] });
    await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_sh", action: "edit", arguments: { command: "echo edited" } });
    await events.waitForEnd(generationId);
    expect(events.of("tool_executing")[0]).toMatchObject({ kind: "execute", title: "Run echo edited", edited: true, locations: [] });
  });

  it("edit_file with an absolute path inside the workspace: the title and location are workspace-relative", async () => {
    const args = { path: join(dir, "src", "app.ts"), old_string: "a", new_string: "b" };
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_ed", name: "edit_file", args: JSON.stringify(args) }] }, { kind: "reply", text: ["ok"] });
    const { id, events } = await newConversation(fx.client, { workspace: dir });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);
    const display = { kind: "edit", title: "Edit src/app.ts", locations: [{ path: "src/app.ts" }] };
    expect(events.of("tool_pending")[0]).toMatchObject(display);
    expect(events.of("tool_executing")[0]).toMatchObject(display);
  });

  it("web_fetch is titled by the URL's host and path; a custom tool carries its declared kind", async () => {
    fx.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "call_f", name: "web_fetch", args: JSON.stringify({ url: "https://example.com/docs/start?x=1" }) },
          { id: "call_g", name: "git_status", args: "{}" },
        ],
      },
      { kind: "reply", text: ["ok"] },
    );
    const { id, events } = await newConversation(fx.client, { workspace: dir });
    const { generationId } = await fx.client.step({ conversationId: id });
    await events.waitForCount("tool_pending", 2);
    const [fetchCall, custom] = events.of("tool_pending");
    expect(fetchCall).toMatchObject({ toolName: "web_fetch", kind: "fetch", title: "Fetch example.com/docs/start", locations: [] });
    expect(custom).toMatchObject({ toolName: "git_status", kind: "read", title: "git_status", locations: [] });
    await fx.client.interrupt({ conversationId: id });
    await events.waitForEnd(generationId);
  });

  it("a read_file call names its file, normalised, and the line it starts at", async () => {
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_r", name: "read_file", args: JSON.stringify({ path: "./notes/../README.md", offset: 40 }) }] },
      { kind: "reply", text: ["ok"] },
    );
    const { id, events } = await newConversation(fx.client, { workspace: dir });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);
    expect(events.of("tool_pending")[0]).toMatchObject({ kind: "read", title: "Read README.md", locations: [{ path: "README.md", line: 40 }] });
  });
});

describe("MCP tools: kind from their annotations, title from the server", () => {
  let agent: McpAgent;
  beforeAll(async () => {
    agent = await startMcpAgent({ mcpServers: { fx: stdioFixture() } });
    await eventually(async () => (await agent.client.server.status()).mcp.connected === 1, 15_000, "the MCP server connected");
  }, 20_000);
  afterAll(async () => {
    await agent?.close();
  });

  it("readOnlyHint → read, destructiveHint → delete, no annotations → other; the call carries the tool's title", async () => {
    const { tools } = await agent.client.tools.list();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("mcp__fx__peek")).toMatchObject({ kind: "read", title: "mcp__fx__peek" });
    expect(byName.get("mcp__fx__wipe")).toMatchObject({ kind: "delete", title: "Wipe the scratch area" });
    expect(byName.get("mcp__fx__echo")).toMatchObject({ kind: "other" });

    agent.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_w", name: "mcp__fx__wipe", args: JSON.stringify({ path: "tmp" }) }] },
      { kind: "reply", text: ["ok"] },
    );
    const { id, events } = await newConversation(agent.client, { workspace: dir });
    const { generationId } = await agent.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId, 10_000);
    const display = { kind: "delete", title: "Wipe the scratch area", locations: [] };
    expect(events.of("tool_pending")[0]).toMatchObject(display);
    expect(events.of("tool_executing")[0]).toMatchObject(display);
    expect(events.of("tool_completed")[0]!.record.result).toBe("wiped tmp");
  });
});

describe("the bounds (units)", () => {
  const tool = (describeCall: Tool["describeCall"], extra: Partial<Tool> = {}): Tool => ({
    name: "t",
    description: "",
    parameters: z.object({}),
    run: async () => ({ success: true, output: "" }),
    describeCall,
    ...extra,
  });

  it("titles are one line of at most MAX_TOOL_TITLE_CHARS characters", () => {
    const long = "x".repeat(500);
    expect([...boundedTitle(long)]).toHaveLength(MAX_TOOL_TITLE_CHARS);
    expect(boundedTitle(long).endsWith("…")).toBe(true);
    expect(boundedTitle("Run  a\n\tb ")).toBe("Run a b");
    const display = toolCallDisplay(tool(() => ({ title: `Run ${long}` })), "t", {}, "/ws");
    expect([...display.title].length).toBeLessThanOrEqual(MAX_TOOL_TITLE_CHARS);
  });

  it("locations are workspace-relative, bounded, and a describeCall that throws falls back to the tool's own title", () => {
    const many = Array.from({ length: 50 }, (_, i) => ({ path: `/ws/f${i}.ts`, line: i === 0 ? 3 : -1 }));
    const display = toolCallDisplay(tool(() => ({ title: "Touch", locations: [...many, { path: "" }] })), "t", {}, "/ws");
    expect(display.locations).toHaveLength(MAX_TOOL_LOCATIONS);
    expect(display.locations[0]).toEqual({ path: "f0.ts", line: 3 });
    expect(display.locations[1]).toEqual({ path: "f1.ts" });
    expect(toolCallDisplay(tool(() => ({ locations: [{ path: "/ws" }] })), "t", {}, "/ws").locations).toEqual([{ path: "." }]);

    const throwing = tool(() => {
      throw new Error("bad arguments");
    }, { title: "Thing", kind: "search" });
    expect(toolCallDisplay(throwing, "t", { x: 1 }, "/ws")).toEqual({ kind: "search", title: "Thing", locations: [] });
    expect(toolCallDisplay(undefined, "nope", {}, "/ws")).toEqual({ kind: "other", title: "nope", locations: [] });
    expect(toolDisplay({ name: "n" })).toEqual({ kind: "other", title: "n" });
  });

  it("maps MCP annotations to kinds", () => {
    expect(kindFromAnnotations(undefined)).toBe("other");
    expect(kindFromAnnotations({})).toBe("other");
    expect(kindFromAnnotations({ readOnlyHint: true })).toBe("read");
    expect(kindFromAnnotations({ readOnlyHint: false, destructiveHint: true })).toBe("delete");
    expect(kindFromAnnotations({ readOnlyHint: false, destructiveHint: false })).toBe("edit");
    expect(kindFromAnnotations({ readOnlyHint: false })).toBe("edit");
  });
});
