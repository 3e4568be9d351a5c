/**
 * Properties of the bundle that `npm start` and the `agentwire` bin run
 * (dist/bundle, built from the current source by vitest's global setup,
 * test/harness/shipped-bundle.ts): what it carries, and what a tool it runs
 * can read of it. Its lazily loaded parts are exercised in
 * bundle-smoke.test.ts.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { killAllCli, REPO_ROOT, runCli } from "../harness/cli-process.js";
import { shippedBundle } from "../harness/shipped-bundle.js";

let entry: string;
beforeAll(() => {
  entry = shippedBundle();
});
afterAll(async () => {
  await killAllCli();
});

it("carries zod without its translations (start-up compiles every byte loaded)", async () => {
  // `import { z } from "zod"` pulls zod's namespace whole, 64 locales included (about 450 KB the start
  // compiled for nothing); `import * as z` lets esbuild keep only what is used. A German message
  // stands for all of them.
  const dir = join(REPO_ROOT, "dist", "bundle");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".mjs"));
  expect(files.length).toBeGreaterThan(1);
  for (const file of files) expect(await readFile(join(dir, file), "utf8"), file).not.toContain("ltige Eingabe");
});

/**
 * Issue 19, item 7: a tool runs as a child of the serving process and as the
 * same user, so `/proc/$PPID/environ` and `/proc/$PPID/cmdline` were one `cat`
 * away from the API key and the token the tool environment leaves out (and
 * `ps` showed --token to every local user). The tool below reads both.
 */
describe.skipIf(process.platform !== "linux")("the serving process holds no secret a tool can read from /proc", { timeout: 60_000 }, () => {
  const READ_PARENT = "tr '\\0' '\\n' < /proc/$PPID/environ; echo '--- cmdline'; tr '\\0' ' ' < /proc/$PPID/cmdline; echo";
  const secret = (name: string) => `${name}-${randomBytes(8).toString("hex")}`;

  /** One serve run: the model (which requires the API key) has the shell tool read its parent; returns the tool's output. */
  async function toolReadsParent(args: string[], env: Record<string, string>, token: string, apiKey: string): Promise<{ output: string; stderr: string }> {
    const fake = await startFakeOpenAI({ apiKey });
    const dir = await mkdtemp(join(tmpdir(), "agentwire-secrets-"));
    try {
      const cli = runCli(
        ["serve", "--port", "0", "--data-dir", join(dir, "data"), "--log-level", "warn", ...args],
        { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: apiKey, AGENTWIRE_MODEL: "fake-model", ...env },
        entry,
      );
      const client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket, token });
      fake.enqueue({ kind: "reply", toolCalls: [{ id: "read_1", name: "shell", args: JSON.stringify({ command: READ_PARENT }) }] }, { kind: "reply", text: ["ok"] });
      const { id, events } = await newConversation(client, { workspace: dir });
      const { generationId } = await client.step({ conversationId: id, autoConfirm: true });
      const completed = await events.waitForMethod("tool_completed", 15_000);
      await events.waitForEnd(generationId, 15_000);
      await client.close();
      // The key still works inside the process: the fake answered both model calls.
      expect(fake.rejected).toEqual([]);
      expect(fake.requests).toHaveLength(2);
      cli.child.kill("SIGTERM");
      expect((await cli.exited).code).toBe(0);
      return { output: String(completed.params.record.result), stderr: cli.stderr() };
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  }

  function expectClean(output: string, secrets: string[], title: RegExp): void {
    expect(output).toContain("--- cmdline");
    for (const value of secrets) expect(output, "a secret in /proc/$PPID").not.toContain(value);
    // The command line is informative still: what runs, with its flags, minus the secret values.
    expect(output.slice(output.indexOf("--- cmdline"))).toMatch(title);
  }

  it("serve: OPENAI_API_KEY, AGENTWIRE_TOKEN and any other variable are gone from /proc/$PPID/environ", async () => {
    const [apiKey, token, other] = [secret("sk-key"), secret("wire-token"), secret("aws-secret")];
    const { output, stderr } = await toolReadsParent([], { AGENTWIRE_TOKEN: token, AWS_SECRET_ACCESS_KEY: other }, token, apiKey);
    expectClean(output, [apiKey, token, other, "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY"], /agentwire serve --port 0 --data-dir \S+ --log-level warn/);
    expect(stderr).not.toMatch(/could not clear/);
  });

  it("serve --token TOKEN: the token is gone from /proc/$PPID/cmdline (and so from ps)", async () => {
    const [apiKey, token] = [secret("sk-key"), secret("flag-token")];
    const { output } = await toolReadsParent(["--token", token], {}, token, apiKey);
    expectClean(output, [apiKey, token], /agentwire serve .*--token \*\*\*/);
  });

  it("serve --token-file PATH: the token is read from the file and appears nowhere", async () => {
    const [apiKey, token] = [secret("sk-key"), secret("file-token")];
    const file = join(await mkdtemp(join(tmpdir(), "agentwire-token-")), "token");
    await writeFile(file, `${token}\n`, { mode: 0o600 });
    try {
      const { output } = await toolReadsParent(["--token-file", file], {}, token, apiKey);
      expectClean(output, [apiKey, token], new RegExp(`agentwire serve .*--token-file ${file}`));
    } finally {
      await rm(join(file, ".."), { recursive: true, force: true });
    }
  });

  it("chat (its embedded server runs tools in the chat process): neither key nor token in /proc/$PPID", async () => {
    const [apiKey, token, envToken] = [secret("sk-key"), secret("chat-token"), secret("env-token")];
    const fake = await startFakeOpenAI({ apiKey });
    const dir = await mkdtemp(join(tmpdir(), "agentwire-secrets-chat-"));
    try {
      fake.enqueue({ kind: "reply", toolCalls: [{ id: "read_1", name: "shell", args: JSON.stringify({ command: READ_PARENT }) }] }, { kind: "reply", text: ["ok"] });
      const cli = runCli(
        ["chat", "read your parent", "--yes", "--json", "--data-dir", join(dir, "data"), "--token", token],
        { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: apiKey, AGENTWIRE_MODEL: "fake-model", AGENTWIRE_TOKEN: envToken },
        entry,
        dir,
      );
      expect((await cli.exited).code).toBe(0);
      expect(fake.rejected).toEqual([]);
      const completed = cli
        .stdout()
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { method?: string; params?: any })
        .find((line) => line.method === "tool_completed");
      expectClean(String(completed?.params.record.result), [apiKey, token, envToken], /agentwire chat read your parent --yes --json --data-dir \S+ --token \*\*\*/);
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
