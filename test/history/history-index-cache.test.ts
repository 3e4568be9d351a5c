/**
 * The index kept between runs (history-index.json in the data dir): a
 * second server's first call takes a file whose mtime and size are
 * unchanged from the cache, without reading it, and reads a changed one;
 * a damaged cache is ignored. The servers here are HistoryIndex instances,
 * as `agentwire serve` makes one per run.
 */
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HistorySection } from "../../protocol/config-history.js";
import { HistoryIndex } from "../../src/history/history-index.js";
import { createLogger } from "../../src/logging/logger.js";
import { CODEX_SESSION, copyHistoryFixtures } from "./history-fixture-dirs.js";

const dirs = copyHistoryFixtures();
afterAll(() => dirs.remove());

const config = HistorySection.parse({ codexHome: dirs.codexHome, claudeProjects: dirs.claudeProjects });
const cacheFile = join(dirs.codexHome, "..", "data", "history-index.json");
const rollout = join(dirs.codexHome, "sessions", "2026", "11", "20", "rollout-2026-11-20T10-00-00-0199a1b2-7c3d-7e4f-8a90-b1c2d3e4f501.jsonl");
const log = createLogger("error", () => {});

async function firstCall() {
  const index = new HistoryIndex(config, log, {}, "/nonexistent-home", cacheFile);
  try {
    return { sessions: await index.sessions(), sources: await index.sources() };
  } finally {
    index.close();
  }
}

describe("the history index cache", () => {
  it("takes unchanged files from the cache and reads changed ones", async () => {
    const mtime = new Date("2026-11-20T10:01:04.000Z"); // whole milliseconds: utimes can set it back exactly
    utimesSync(rollout, mtime, mtime);
    const first = await firstCall();
    expect(first.sessions.find((s) => s.id === CODEX_SESSION)?.title).toBe("Why does the invoice total test fail?");
    expect(JSON.parse(readFileSync(cacheFile, "utf8")).sessions).toHaveLength(2);

    // Same size and mtime, other words: the cache speaks for the file (its problems too).
    const original = readFileSync(rollout, "utf8");
    writeFileSync(rollout, original.replace("Why does the   invoice total", "Why does the   INVOICE TOTAL"));
    utimesSync(rollout, mtime, mtime);
    const cached = await firstCall();
    expect(cached.sessions.find((s) => s.id === CODEX_SESSION)?.title).toBe("Why does the invoice total test fail?");
    expect(cached.sources[0]!.problemCount).toBe(1);

    // A new mtime: read again.
    utimesSync(rollout, new Date(), new Date());
    const read = await firstCall();
    expect(read.sessions.find((s) => s.id === CODEX_SESSION)?.title).toBe("Why does the INVOICE TOTAL test fail?");
  });

  it("ignores a damaged cache and writes it again", async () => {
    writeFileSync(cacheFile, "{ not json");
    const { sessions } = await firstCall();
    expect(sessions.map((s) => s.id)).toContain(CODEX_SESSION);
    expect(JSON.parse(readFileSync(cacheFile, "utf8")).version).toBeTypeOf("number");
  });
});
