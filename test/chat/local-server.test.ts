/**
 * The client commands and the server that holds their data dir: `agentwire
 * chat` connects to a running `agentwire serve` on the same data dir (which
 * says where it listens beside its LOCK) instead of being locked out; asks
 * for a token when that server needs one; starts its own server over a
 * stale LOCK; waits a bounded time for a holder still starting.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, connectOrEmbed } from "../../src/chat/connect-or-embed.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { shippedBundle } from "../harness/shipped-bundle.js";
import { testConfig } from "../harness/test-config.js";
import { startTestServer } from "../harness/test-server.js";

let fake: FakeOpenAI;
let root: string;
let entry: string;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: "test-key" });
  root = await mkdtemp(join(tmpdir(), "agentwire-local-server-"));
  entry = shippedBundle();
});
afterAll(async () => {
  await killAllCli();
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

const env = () => ({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model" });
const newDir = async (name: string) => {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  return dir;
};

describe.concurrent("agentwire chat and a running serve", { timeout: 60_000 }, () => {
  it("connects to the serve that holds the data dir, says so on stderr, and its conversation is that server's", async () => {
    const dataDir = await newDir("shared");
    const serve = runCli(["serve", "--port", "0", "--data-dir", dataDir], env(), entry, root);
    const url = await serve.listening();
    // The advert: the address, never the token.
    expect(JSON.parse(await readFile(join(dataDir, "SERVER"), "utf8"))).toEqual({ pid: serve.child.pid, shared: true, url, tokenRequired: false });

    fake.enqueue({ kind: "reply", text: ["from the running server"] });
    const chat = runCli(["chat", "hello there", "--data-dir", dataDir, "--json"], env(), entry, root);
    expect((await chat.exited).code).toBe(0);
    expect(chat.stderr()).toBe(`agentwire: connected to the agentwire server at ${url} (pid ${serve.child.pid}), which holds the data dir ${dataDir}\n`);
    const id = JSON.parse(chat.stdout().split("\n")[0]!).result.id as string;

    // Run where an older version left a ./.agentwire store: the command says so too (the server's notices are about its own directory).
    const project = await newDir("old-project");
    await mkdir(join(project, ".agentwire", "conversations"), { recursive: true });
    const list = runCli(["conversations", "list", "--data-dir", dataDir, "--json"], env(), entry, project);
    expect((await list.exited).code).toBe(0);
    expect((JSON.parse(list.stdout()) as { id: string }[]).map((c) => c.id)).toContain(id);
    expect(list.stderr()).toContain(`agentwire: ${join(project, ".agentwire")} holds conversations from an older agentwire`);

    serve.child.kill("SIGTERM");
    await serve.exited;
    // Withdrawn with the LOCK when the server stops.
    await expect(readFile(join(dataDir, "SERVER"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    await expect(readFile(join(dataDir, "LOCK"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a serve that needs a token: a clear error without one, connected with AGENTWIRE_TOKEN", async () => {
    const dataDir = await newDir("token");
    const serve = runCli(["serve", "--port", "0", "--data-dir", dataDir], { ...env(), AGENTWIRE_TOKEN: "s3cret-token" }, entry, root);
    const url = await serve.listening();
    const advert = await readFile(join(dataDir, "SERVER"), "utf8");
    expect(advert).not.toContain("s3cret-token");
    expect(JSON.parse(advert)).toMatchObject({ url, tokenRequired: true });

    const without = runCli(["conversations", "list", "--data-dir", dataDir], env(), entry, root);
    expect((await without.exited).code).toBe(1);
    expect(without.stderr()).toContain(`the agentwire server at ${url} (pid ${serve.child.pid}), which holds the data dir ${dataDir}, needs a token`);
    expect(without.stderr()).toContain("--token-file");

    const withToken = runCli(["conversations", "list", "--data-dir", dataDir, "--json"], { ...env(), AGENTWIRE_TOKEN: "s3cret-token" }, entry, root);
    expect((await withToken.exited).code).toBe(0);
    expect(JSON.parse(withToken.stdout())).toEqual([]);
    serve.child.kill("SIGTERM");
    await serve.exited;
  });

  it("a stale LOCK and advert (their process is gone): chat starts its own server, as before", async () => {
    const dataDir = await newDir("stale");
    const dead = spawn(process.execPath, ["-e", ""]);
    await new Promise((resolve) => dead.on("close", resolve));
    await writeFile(join(dataDir, "LOCK"), `${dead.pid}\n`);
    await writeFile(join(dataDir, "SERVER"), JSON.stringify({ pid: dead.pid, shared: true, url: "ws://127.0.0.1:9", tokenRequired: false }));
    fake.enqueue({ kind: "reply", text: ["embedded"] });
    const chat = runCli(["chat", "hi", "--data-dir", dataDir, "--json"], env(), entry, root);
    expect((await chat.exited).code).toBe(0);
    expect(chat.stderr()).toBe("");
    // Its own server said it is not to be shared, and took the advert back with the LOCK.
    await expect(readFile(join(dataDir, "LOCK"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("a holder that has not said where it listens", () => {
  it("is waited for a bounded time, then connected to once it says; an error naming the wait if it never does", async () => {
    const dataDir = await newDir("starting");
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    try {
      await writeFile(join(dataDir, "LOCK"), `${holder.pid}\n`);
      const target = { embedded: testConfig({ server: { dataDir } }) };
      const stderr: string[] = [];
      const sink = { write: (text: string) => stderr.push(text) } as unknown as NodeJS.WritableStream;
      await expect(connectOrEmbed(target, "test", { stderr: sink, localServerWaitMs: 200 })).rejects.toThrow(
        new ConnectError(`the data dir ${dataDir} is held by process ${holder.pid}, which has not said where it listens within 200 ms; connect to it with --url, or pick another --data-dir`),
      );

      // Says where it listens while a command waits: the command connects there.
      const server = await startTestServer();
      try {
        const connecting = connectOrEmbed(target, "test", { stderr: sink, localServerWaitMs: 10_000 });
        await new Promise((resolve) => setTimeout(resolve, 150));
        await writeFile(join(dataDir, "SERVER"), JSON.stringify({ pid: holder.pid, shared: true, url: server.url, tokenRequired: false }));
        const connection = await connecting;
        expect(connection).toMatchObject({ url: server.url, embedded: false });
        expect((await connection.client.server.status()).instanceId).toBe(server.server.app.instanceId);
        await connection.close();
        expect(stderr.join("")).toContain(`connected to the agentwire server at ${server.url} (pid ${holder.pid})`);
      } finally {
        await server.close();
      }
    } finally {
      holder.kill();
    }
  });

  it("another command's own server is not shared: a clear error, no wait", async () => {
    const dataDir = await newDir("private");
    const first = await connectOrEmbed({ embedded: testConfig({ server: { dataDir, port: 0, logLevel: "silent" } }) }, "first");
    try {
      expect(first.embedded).toBe(true);
      const second = connectOrEmbed({ embedded: testConfig({ server: { dataDir } }) }, "second");
      await expect(second).rejects.toThrow(/is in use by another agentwire command \(pid \d+\), whose own server stops with it; run `agentwire serve`/);
    } finally {
      await first.close();
    }
  });
});
