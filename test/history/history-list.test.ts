/**
 * history.sources and history.list over the transcript fixtures: both
 * sources found with their sessions, a damaged and an unknown line reported
 * (never fatal), pages with a cursor, filters, and a session written while
 * the server runs listed through the watcher.
 */
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useAgentFixture } from "../harness/agent-fixture.js";
import { eventually } from "../harness/eventually.js";
import { expectInvalidParams } from "../harness/rpc-errors.js";
import { CLAUDE_SESSION, CODEX_SESSION, copyHistoryFixtures } from "./history-fixture-dirs.js";

const dirs = copyHistoryFixtures();
afterAll(() => dirs.remove());

describe("history.sources and history.list", () => {
  const fx = useAgentFixture({ config: { history: { codexHome: dirs.codexHome, claudeProjects: dirs.claudeProjects } } });

  it("finds both sources and reports the damaged and unknown lines without failing", async () => {
    const { enabled, sources } = await fx.client.history.sources();
    expect(enabled).toBe(true);
    const [codex, claude] = sources;
    expect(codex).toMatchObject({ kind: "codex", path: join(dirs.codexHome, "sessions"), exists: true, sessionCount: 1, problemCount: 1 });
    expect(codex!.problems[0]!.message).toMatch(/1 line of an unknown type: 15/);
    expect(claude).toMatchObject({ kind: "claude", path: dirs.claudeProjects, exists: true, sessionCount: 1, problemCount: 1 });
    expect(claude!.problems[0]!.message).toMatch(/1 damaged line .*: 7/);
    expect(claude!.problems[0]!.path).toMatch(/5c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6\.jsonl$/);
  });

  it("lists each session with its title, cwd, model, times and message count, newest first", async () => {
    const { data, nextCursor } = await fx.client.history.list({});
    expect(nextCursor).toBeUndefined();
    expect(data.map((s) => s.id)).toEqual([CLAUDE_SESSION, CODEX_SESSION]);
    expect(data[1]).toMatchObject({
      source: "codex",
      title: "Why does the invoice total test fail?",
      cwd: "/home/dana/projects/invoice-api",
      model: "gpt-5-codex",
      createdAt: "2026-11-20T10:00:00.000Z",
      updatedAt: "2026-11-20T10:01:03.000Z",
      messageCount: 4,
    });
    expect(data[0]).toMatchObject({
      source: "claude",
      title: "Add a test for negative invoice totals",
      model: "claude-sonnet-4-5-20250929",
      createdAt: "2026-11-21T09:00:00.000Z",
      messageCount: 3,
    });
  });

  it("pages with a cursor and filters by source and cwd", async () => {
    const first = await fx.client.history.list({ limit: 1 });
    expect(first.data.map((s) => s.id)).toEqual([CLAUDE_SESSION]);
    const second = await fx.client.history.list({ limit: 1, cursor: first.nextCursor! });
    expect(second.data.map((s) => s.id)).toEqual([CODEX_SESSION]);
    expect(second.nextCursor).toBeUndefined();
    expect((await fx.client.history.list({ source: "codex" })).data.map((s) => s.id)).toEqual([CODEX_SESSION]);
    expect((await fx.client.history.list({ cwd: "/home/dana" })).data).toHaveLength(2);
    expect((await fx.client.history.list({ cwd: "/home/dana/projects/invoice" })).data).toHaveLength(0);
    await expectInvalidParams(fx.client.history.list({ cursor: "nope" }), "cursor");
    await expectInvalidParams(fx.client.history.list({ cwd: "relative/dir" }), "cwd");
  });

  it("lists a session written while the server runs (the watcher), in a folder made after the index", async () => {
    await fx.client.history.list({});
    const day = join(dirs.codexHome, "sessions", "2026", "11", "25");
    mkdirSync(day, { recursive: true });
    const id = "0199ffff-0000-7000-8000-000000000abc";
    const meta = { timestamp: "2026-11-25T08:00:00.000Z", type: "session_meta", payload: { id, timestamp: "2026-11-25T08:00:00.000Z", cwd: "/srv/new" } };
    const user = { timestamp: "2026-11-25T08:00:01.000Z", type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: "A new session" }] } };
    writeFileSync(join(day, `rollout-2026-11-25T08-00-00-${id}.jsonl`), `${JSON.stringify(meta)}\n${JSON.stringify(user)}\n`);
    let listed: { id: string; title: string }[] = [];
    await eventually(
      async () => {
        listed = (await fx.client.history.list({ source: "codex" })).data;
        return listed.some((s) => s.id === `codex:${id}`);
      },
      3000,
      "the new rollout listed",
    );
    expect(listed[0]).toMatchObject({ id: `codex:${id}`, title: "A new session", cwd: "/srv/new" });
  });

  it("reads a session again when it grows, and forgets it when its file is removed", async () => {
    const file = join(dirs.claudeProjects, "-home-dana-projects-invoice-api", "5c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6.jsonl");
    const more = { type: "user", sessionId: "5c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6", cwd: "/home/dana/projects/invoice-api", timestamp: "2026-11-27T12:00:00.000Z", uuid: "b1", parentUuid: null, message: { role: "user", content: "One more thing" } };
    appendFileSync(file, `${JSON.stringify(more)}\n`);
    const claude = async () => (await fx.client.history.list({ source: "claude" })).data[0];
    await eventually(async () => (await claude())?.messageCount === 4, 3000, "the grown session read again");
    expect(await claude()).toMatchObject({ updatedAt: "2026-11-27T12:00:00.000Z" });
    rmSync(file);
    await eventually(async () => (await claude()) === undefined, 3000, "the removed session forgotten");
  });
});

describe("history with nothing found or indexing off", () => {
  const fx = useAgentFixture({ config: { history: { codexHome: join(dirs.codexHome, "missing"), claudeProjects: join(dirs.claudeProjects, "missing"), enabled: true } } });

  it("reports folders that do not exist, with nothing listed", async () => {
    const { sources } = await fx.client.history.sources();
    expect(sources.map((s) => [s.kind, s.exists, s.sessionCount])).toEqual([
      ["codex", false, 0],
      ["claude", false, 0],
    ]);
    expect((await fx.client.history.list({})).data).toEqual([]);
  });
});

describe("history over a real WebSocket", () => {
  const fx = useAgentFixture({ transport: "websocket", config: { history: { codexHome: dirs.codexHome, claudeProjects: dirs.claudeProjects } } });

  it("lists the fixture sessions", async () => {
    const { data } = await fx.client.history.list({ source: "codex", limit: 500 });
    expect(data.map((s) => s.id)).toContain(CODEX_SESSION);
  });
});
