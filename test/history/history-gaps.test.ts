/**
 * What the first history index left out: a Codex compaction imported as a
 * compaction record (the model then sees its summary, not what came before),
 * the runtime's model kept when a runtime of that kind is configured (and
 * its session resumed when that runtime's home holds it),
 * Claude Code sub-agents' transcripts listed with their parent, and a
 * watched folder removed and made again found without a restart.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useAgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { eventually } from "../harness/eventually.js";
import { CLAUDE_SESSION, CODEX_SESSION, copyHistoryFixtures } from "./history-fixture-dirs.js";

const dirs = copyHistoryFixtures();
afterAll(() => dirs.remove());

const jsonl = (lines: object[]) => `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;

const COMPACTED = "0199c0c0-0000-7000-8000-00000000c0c0";
const codexText = (text: string, role: "user" | "assistant") => ({ type: "message", role, content: [{ type: role === "user" ? "input_text" : "output_text", text }] });
writeFileSync(
  join(dirs.codexHome, "sessions", "2026", "11", "20", `rollout-2026-11-20T12-00-00-${COMPACTED}.jsonl`),
  jsonl([
    { timestamp: "2026-11-20T12:00:00.000Z", type: "session_meta", payload: { id: COMPACTED, timestamp: "2026-11-20T12:00:00.000Z", cwd: "/srv/long" } },
    { timestamp: "2026-11-20T12:00:00.500Z", type: "turn_context", payload: { cwd: "/srv/long", model: "gpt-5-codex" } },
    { timestamp: "2026-11-20T12:00:01.000Z", type: "response_item", payload: codexText("Before the compaction", "user") },
    { timestamp: "2026-11-20T12:00:02.000Z", type: "response_item", payload: codexText("Early answer", "assistant") },
    { timestamp: "2026-11-20T12:00:03.000Z", type: "compacted", payload: { message: "SUMMARY: the user asked about invoices; totals round to cents." } },
    { timestamp: "2026-11-20T12:00:03.100Z", type: "event_msg", payload: { type: "context_compacted" } },
    { timestamp: "2026-11-20T12:00:04.000Z", type: "response_item", payload: codexText("After the compaction", "user") },
    { timestamp: "2026-11-20T12:00:05.000Z", type: "response_item", payload: codexText("Late answer", "assistant") },
  ]),
);

// Sub-agents: one beside its session (before Claude Code 2.1.2), one in <session>/subagents/.
const PARENT = CLAUDE_SESSION.slice("claude:".length);
const project = join(dirs.claudeProjects, "-home-dana-projects-invoice-api");
const agentLine = (agentId: string, type: "user" | "assistant", content: string, at: string) => ({
  type,
  isSidechain: true,
  agentId,
  sessionId: PARENT,
  cwd: "/home/dana/projects/invoice-api",
  timestamp: at,
  uuid: `${agentId}-${at}`,
  message: type === "user" ? { role: "user", content } : { role: "assistant", id: `msg_${agentId}`, model: "claude-haiku-4-5", content: [{ type: "text", text: content }] },
});
writeFileSync(join(project, "agent-a1b2c3d4.jsonl"), jsonl([agentLine("a1b2c3d4", "user", "Find the rounding code", "2026-11-21T09:00:10.000Z"), agentLine("a1b2c3d4", "assistant", "It is in src/total.ts", "2026-11-21T09:00:12.000Z")]));
mkdirSync(join(project, PARENT, "subagents"), { recursive: true });
writeFileSync(join(project, PARENT, "subagents", "agent-e5f6a7b8.jsonl"), jsonl([agentLine("e5f6a7b8", "user", "Run the tests", "2026-11-21T09:00:20.000Z"), agentLine("e5f6a7b8", "assistant", "All pass", "2026-11-21T09:00:22.000Z")]));
writeFileSync(join(project, PARENT, "subagents", "agent-e5f6a7b8.meta.json"), JSON.stringify({ agentType: "general-purpose" }));

describe("history gaps: compaction, model, sub-agents", () => {
  const fx = useAgentFixture({
    config: { history: { codexHome: dirs.codexHome, claudeProjects: dirs.claudeProjects }, runtimes: { codex: { runtime: "codex", home: dirs.codexHome } } },
  });

  it("imports a Codex compaction as a compaction record, and the model is sent its summary instead of what came before", async () => {
    const imported = await fx.client.history.importSession({ id: `codex:${COMPACTED}` });
    const conversationId = imported.conversation.id;
    const { records } = await fx.client.conversation.get({ conversationId, includeRecords: true });
    expect(records!.map((r: any) => (r.type === "message" ? r.role : r.type))).toEqual(["user", "assistant", "compaction", "user", "assistant"]);
    expect(records![2]).toMatchObject({ type: "compaction", trigger: "imported", summary: "SUMMARY: the user asked about invoices; totals round to cents.", model: "gpt-5-codex", timestamp: "2026-11-20T12:00:03.000Z" });
    expect(imported.recordCount).toBe(5);

    const events = new EventRecorder(fx.client, conversationId);
    await fx.client.conversation.subscribe({ conversationId });
    // The imported model is the runtime's (codex/…): this step runs on the fake endpoint's model.
    await fx.client.conversation.update({ conversationId, model: "fake-model" });
    await fx.client.message.append({ conversationId, role: "user", content: "Carry on." });
    fx.fake.enqueue({ kind: "reply", text: ["Carrying on."] });
    const { generationId } = await fx.client.step({ conversationId });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    const sent = JSON.stringify(fx.fake.messagesOf(fx.fake.requests.length - 1));
    expect(sent).toContain("SUMMARY: the user asked about invoices");
    expect(sent).toContain("After the compaction");
    expect(sent).not.toContain("Before the compaction");
  });

  it("keeps the runtime's model when a runtime of its kind is configured, else the server's default", async () => {
    const codex = await fx.client.history.importSession({ id: CODEX_SESSION });
    expect(codex.conversation.model).toBe("codex/gpt-5-codex");
    // The runtime's home is the one the rollout was read from: its next step resumes that very thread.
    expect(codex.conversation.runtimeSession).toEqual({ runtime: "codex", sessionId: CODEX_SESSION.slice("codex:".length) });
    const claude = await fx.client.history.importSession({ id: CLAUDE_SESSION });
    expect(claude.conversation.model).toBeNull(); // no claude runtime configured
    expect(claude.conversation.runtimeSession).toBeUndefined();
  });

  it("lists Claude Code sub-agents' transcripts, both layouts, with their parent session", async () => {
    const { data } = await fx.client.history.list({ source: "claude" });
    const agents = data.filter((s) => s.parentId !== undefined).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(agents).toMatchObject([
      { id: "claude:agent-a1b2c3d4", parentId: CLAUDE_SESSION, title: "Find the rounding code", messageCount: 2, model: "claude-haiku-4-5" },
      { id: "claude:agent-e5f6a7b8", parentId: CLAUDE_SESSION, title: "Run the tests", messageCount: 2 },
    ]);
    expect(data.find((s) => s.id === CLAUDE_SESSION)?.parentId).toBeUndefined();
    const imported = await fx.client.history.importSession({ id: "claude:agent-e5f6a7b8" });
    expect(imported.recordCount).toBe(2);
  });
});

describe("history: a watched folder removed and made again", () => {
  const own = copyHistoryFixtures();
  afterAll(() => own.remove());
  const fx = useAgentFixture({ config: { history: { codexHome: own.codexHome, claudeProjects: own.claudeProjects } } });

  it("is watched again: a session written into the new folder is listed", async () => {
    expect((await fx.client.history.list({ source: "claude" })).data.map((s) => s.id)).toEqual([CLAUDE_SESSION]);
    rmSync(own.claudeProjects, { recursive: true });
    expect((await fx.client.history.list({ source: "claude" })).data).toEqual([]);
    const folder = join(own.claudeProjects, "-srv-again");
    mkdirSync(folder, { recursive: true });
    const id = "9d9d9d9d-0000-4000-8000-000000000001";
    const line = (text: string, at: string) => ({ type: "user", sessionId: id, cwd: "/srv/again", timestamp: at, uuid: at, message: { role: "user", content: text } });
    writeFileSync(join(folder, `${id}.jsonl`), jsonl([line("Back again", "2026-11-26T10:00:00.000Z")]));
    expect((await fx.client.history.list({ source: "claude" })).data.map((s) => s.title)).toEqual(["Back again"]);
    // The new folder is watched: a second session written into it now is listed without another scan.
    const second = "9d9d9d9d-0000-4000-8000-000000000002";
    writeFileSync(join(folder, `${second}.jsonl`), jsonl([{ ...line("And once more", "2026-11-26T11:00:00.000Z"), sessionId: second }]));
    await eventually(async () => (await fx.client.history.list({ source: "claude" })).data.length === 2, 3000, "the second session listed by the watcher");
  });
});
