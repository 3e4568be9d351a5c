/**
 * The real `agentwire` CLI as a child process: the listening line, the HTTP
 * routes on the same port, usage and errors, the data-dir lock and a clean
 * SIGTERM shutdown.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { requests } from "../../protocol/index.js";
import { killAllCli, REPO_ROOT, runCli, type CliProcess } from "../harness/cli-process.js";

const LISTENING = /^agentwire listening on ws:\/\/127\.0\.0\.1:\d+$/;

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentwire-cli-"));
});
afterEach(async () => {
  await killAllCli();
  await rm(dataDir, { recursive: true, force: true });
});
afterAll(killAllCli);

/** The exit of a process that must fail to start; fails at once if it starts listening instead. */
async function exitWithoutListening(cli: CliProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const started = cli.listening().then(
    (url) => {
      throw new Error(`expected a refusal, but it listens on ${url}`);
    },
    () => new Promise<never>(() => {}), // exited before listening: the exit wins the race
  );
  return Promise.race([cli.exited, started]);
}

function httpBase(wsUrl: string): string {
  return wsUrl.replace(/^ws:/, "http:");
}

describe("agentwire serve", { timeout: 20_000 }, () => {
  it("prints one listening line, serves /healthz, /openrpc.json and the WebSocket, and stops cleanly on SIGTERM", async () => {
    const cli = runCli(["serve", "--port", "0", "--data-dir", dataDir]);
    const url = await cli.listening();
    expect(url).not.toMatch(/:0$/);

    const health = await fetch(`${httpBase(url)}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get("content-type")).toContain("application/json");
    const body = (await health.json()) as { ok: unknown; version: unknown; uptime: unknown };
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    expect(body).toEqual({ ok: true, version: pkg.version, uptime: expect.any(Number) });
    expect(body.uptime as number).toBeGreaterThanOrEqual(0);

    const openrpc = await fetch(`${httpBase(url)}/openrpc.json`);
    expect(openrpc.status).toBe(200);
    const doc = (await openrpc.json()) as { openrpc: unknown; methods: { name: string }[] };
    expect(typeof doc.openrpc).toBe("string");
    expect(doc.methods.map((m) => m.name).sort()).toEqual(Object.keys(requests).sort());

    expect((await fetch(`${httpBase(url)}/nope`)).status).toBe(404);

    // The WebSocket on the same port works, and writes into --data-dir.
    const client = await AgentwireClient.connect(url, { WebSocket: WebSocket as never });
    const c = await client.conversation.create({ title: "via cli" });
    await client.message.append({ conversationId: c.id, role: "user", content: "hello" });
    await client.close();
    expect(existsSync(join(dataDir, "conversations", c.id))).toBe(true);
    // A client still connected at shutdown is told the server is going away.
    const lingering = await AgentwireClient.connect(url, { WebSocket: WebSocket as never });
    const lingeringClosed = new Promise<{ code: number }>((resolve) => lingering.onClose(resolve));
    expect((await readFile(join(dataDir, "LOCK"), "utf8")).trim()).toBe(String(cli.child.pid));

    cli.child.kill("SIGTERM");
    const exit = await cli.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect((await lingeringClosed).code).toBe(1001);
    // Exactly one line on stdout, whatever was logged.
    const lines = cli.stdout().split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, -1)).toHaveLength(1);
    expect(lines[0]).toMatch(LISTENING);
    expect(existsSync(join(dataDir, "LOCK"))).toBe(false);

    // The lock is released: a new server starts on the same dir and has the data.
    const next = runCli(["serve", "--port", "0", "--data-dir", dataDir]);
    const nextUrl = await next.listening();
    const again = await AgentwireClient.connect(nextUrl, { WebSocket: WebSocket as never });
    const got = await again.conversation.get({ conversationId: c.id, includeRecords: true });
    expect(got.records!.map((r) => (r as { content: string }).content)).toEqual(["hello"]);
    await again.close();
    next.child.kill("SIGTERM");
    expect((await next.exited).code).toBe(0);
  });

  it("a SIGTERM sent the moment the listening line is read stops it cleanly (the store closed, the lock released)", async () => {
    // Before the fix, 19 of 20 such servers died of the signal itself: the handler was set after the line was written.
    for (let i = 0; i < 5; i++) {
      const dir = join(dataDir, `at-once-${i}`);
      const cli = runCli(["serve", "--port", "0", "--data-dir", dir]);
      cli.child.stdout!.once("data", () => cli.child.kill("SIGTERM"));
      expect(await cli.exited, cli.stderr()).toEqual({ code: 0, signal: null });
      expect(cli.stderr()).toContain("SIGTERM: shutting down");
      expect(existsSync(join(dir, "LOCK"))).toBe(false);
    }
  });

  it("a second serve on the same data dir exits non-zero saying it is in use", async () => {
    const first = runCli(["serve", "--port", "0", "--data-dir", dataDir]);
    const url = await first.listening();

    const second = runCli(["serve", "--port", "0", "--data-dir", dataDir]);
    const exit = await exitWithoutListening(second);
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(second.stderr()).toContain("in use");
    expect(second.stdout()).not.toContain("listening");

    // The first one is unharmed.
    expect((await fetch(`${httpBase(url)}/healthz`)).status).toBe(200);
    expect(existsSync(join(dataDir, "LOCK"))).toBe(true);
  });

  it("refuses --host 0.0.0.0 without a token, pointing at --token", async () => {
    const cli = runCli(["serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", dataDir]);
    const exit = await exitWithoutListening(cli);
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(cli.stderr()).toContain("--token");
    expect(cli.stdout()).toBe("");
  });
});

describe("usage", { timeout: 20_000 }, () => {
  it("--help lists the commands; serve --help names every flag; both exit 0", async () => {
    const overview = runCli(["--help"]);
    const serve = runCli(["serve", "--help"]);
    expect((await overview.exited).code).toBe(0);
    expect((await serve.exited).code).toBe(0);
    for (const command of ["serve", "config", "chat", "conversations", "mcp", "models", "tools", "status", "trust", "help"]) {
      expect(overview.stdout()).toMatch(new RegExp(`^  ${command} `, "m"));
    }
    expect(serve.stdout()).toMatch(/^Usage: agentwire serve \[options\]/);
    for (const flag of ["--host", "--port", "--data-dir", "--token", "--allow-origin", "--max-payload"]) {
      expect(serve.stdout()).toContain(flag);
    }
  });

  it("an unknown flag exits 2 and names it", async () => {
    const cli = runCli(["serve", "--no-such-flag", "--data-dir", dataDir]);
    const exit = await cli.exited;
    expect(exit.code).toBe(2);
    expect(cli.stderr()).toContain("--no-such-flag");
    expect(cli.stdout()).toBe("");
  });

  it("a malformed value exits 2 and names the flag", async () => {
    const cli = runCli(["serve", "--port", "eighty", "--data-dir", dataDir]);
    expect((await cli.exited).code).toBe(2);
    expect(cli.stderr()).toContain("--port");
  });
});
