/**
 * The index's bounds, on the index itself (no server): a line past
 * maxLineBytes is damaged, a half-written last line is not, a file past
 * maxFileBytes is reported and not read, and sessions past maxSessions are
 * left out (the most recently changed kept) and counted.
 */
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CONFIG_DEFAULTS } from "../../protocol/config-defaults.js";
import { HistoryIndex } from "../../src/history/history-index.js";
import { createLogger } from "../../src/logging/logger.js";
import { copyHistoryFixtures, type HistoryDirs } from "./history-fixture-dirs.js";

let dirs: HistoryDirs | undefined;
let index: HistoryIndex | undefined;
afterEach(() => {
  index?.close();
  dirs?.remove();
});

function indexOf(overrides: Partial<typeof CONFIG_DEFAULTS.history>): HistoryIndex {
  dirs = copyHistoryFixtures();
  index = new HistoryIndex({ ...CONFIG_DEFAULTS.history, codexHome: dirs.codexHome, claudeProjects: dirs.claudeProjects, ...overrides }, createLogger("silent"));
  return index;
}

const line = (payload: object, at = "2026-11-22T08:00:00.000Z") => JSON.stringify({ timestamp: at, type: "response_item", payload });

describe("history index bounds", () => {
  it("a line past maxLineBytes is damaged; a last line without its newline is still being written", async () => {
    const history = indexOf({ maxLineBytes: 400 });
    const project = join(dirs!.codexHome, "sessions", "2026", "11", "22");
    mkdirSync(project, { recursive: true });
    const long = line({ type: "message", role: "user", content: [{ type: "input_text", text: "x".repeat(500) }] });
    const short = line({ type: "message", role: "user", content: [{ type: "input_text", text: "short" }] });
    writeFileSync(join(project, "rollout-2026-11-22T08-00-00-0199bbbb-0000-7000-8000-000000000001.jsonl"), `${long}\n${short}\n{"timestamp":"2026-11-22T08:00`);
    const sources = await history.sources();
    const problem = sources[0]!.problems.find((p) => p.path.includes("0199bbbb"));
    expect(problem?.message).toBe("1 damaged line (not JSON, or too long): 1");
    const session = (await history.sessions()).find((s) => s.id === "codex:0199bbbb-0000-7000-8000-000000000001");
    expect(session).toMatchObject({ title: "short", messageCount: 1 });
  });

  it("a file past maxFileBytes is reported and not read", async () => {
    const history = indexOf({ maxFileBytes: 1000 });
    const [codex, claude] = await history.sources();
    expect(codex!.sessionCount + claude!.sessionCount).toBe(0);
    expect(codex!.problems[0]!.message).toMatch(/larger than history.maxFileBytes/);
    expect(claude!.problems[0]!.message).toMatch(/larger than history.maxFileBytes/);
  });

  it("keeps the most recently changed sessions within maxSessions and counts the others", async () => {
    const history = indexOf({ maxSessions: 1 });
    // The Codex rollout is the older file: Claude Code's session is kept.
    const old = new Date("2026-01-01T00:00:00Z");
    utimesSync(join(dirs!.codexHome, "sessions", "2026", "11", "20", "rollout-2026-11-20T10-00-00-0199a1b2-7c3d-7e4f-8a90-b1c2d3e4f501.jsonl"), old, old);
    const sessions = await history.sessions();
    expect(sessions.map((s) => s.source)).toEqual(["claude"]);
    const sources = await history.sources();
    expect(sources.map((s) => s.sessionCount)).toEqual([0, 1]);
    expect(sources[0]!.problems[0]).toEqual({ path: join(dirs!.codexHome, "sessions"), message: "1 older session not indexed (history.maxSessions is 1)" });
  });

  it("reads nothing while disabled", async () => {
    const history = indexOf({ enabled: false });
    expect(await history.sessions()).toEqual([]);
  });
});
