/**
 * --log-format json: the real CLI writes one JSON object per line on stderr
 * ({time, level, msg, …}), stdout keeps its one listening line; loop log
 * lines carry the conversation and generation; a bad value is a usage error.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseCli, UsageError } from "../../src/cli-options.js";
import { createLogger } from "../../src/logging/logger.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { eventually } from "../harness/eventually.js";

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentwire-logfmt-"));
});
afterEach(async () => {
  await killAllCli();
  await rm(dataDir, { recursive: true, force: true });
});
afterAll(killAllCli);

describe("agentwire serve --log-format json", { timeout: 20_000 }, () => {
  it("writes JSON lines to stderr and only the listening line to stdout", async () => {
    const cli = runCli(["serve", "--port", "0", "--data-dir", dataDir, "--log-format", "json", "--log-level", "info"]);
    await cli.listening();
    await eventually(() => cli.stderr().includes("data dir"), 5000, "the start-up log line");
    cli.child.kill("SIGTERM");
    expect((await cli.exited).code).toBe(0);
    expect(cli.stdout()).toMatch(/^agentwire listening on ws:\/\/\S+\n$/);
    const lines = cli.stderr().split("\n").filter((l) => l.trim() !== "");
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) {
      const entry = JSON.parse(line);
      expect(entry).toMatchObject({ time: expect.any(String), level: expect.stringMatching(/^(debug|info|warn|error)$/), msg: expect.any(String) });
      expect(new Date(entry.time).toISOString()).toBe(entry.time);
    }
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(expect.arrayContaining([expect.stringContaining("data dir"), "SIGTERM: shutting down"]));
  });

  it("takes text or json from the flag or agentwire.json, and refuses anything else as a usage error", () => {
    const where = { discover: false };
    expect(parseCli(["serve", "--log-format", "json"], {}, where).config!.server.logFormat).toBe("json");
    expect(parseCli(["serve"], {}, where).config!.server.logFormat).toBe("text");
    expect(() => parseCli(["serve", "--log-format", "xml"], {}, where)).toThrow(UsageError);
    expect(() => parseCli(["serve", "--log-format", "xml"], {}, where)).toThrow("--log-format must be text or json");
  });
});

describe("the json line", () => {
  it("lifts conversationId and generationId from a child logger, keeps an error's stack in err, and stays on one line", () => {
    const lines: string[] = [];
    const log = createLogger("debug", { format: "json", write: (l) => lines.push(l) });
    const child = log.child({ conversationId: "c_1", generationId: "g_2" });
    child.error("generation g_2 failed", new Error("boom\nsecond line"));
    child.info("detail too", { n: 1 });
    log.debug("plain");
    expect(lines.every((l) => l.endsWith("\n") && l.indexOf("\n") === l.length - 1)).toBe(true);
    const [failed, detail, plain] = lines.map((l) => JSON.parse(l));
    expect(failed).toMatchObject({ level: "error", msg: "generation g_2 failed", conversationId: "c_1", generationId: "g_2" });
    expect(failed.err).toMatchObject({ name: "Error", message: "boom\nsecond line" });
    expect(failed.err.stack).toContain("boom");
    expect(detail).toMatchObject({ level: "info", conversationId: "c_1", detail: { n: 1 } });
    expect(plain).toEqual({ time: expect.any(String), level: "debug", msg: "plain" });
  });
});
