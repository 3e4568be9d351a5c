/**
 * "No tool inherits the server's secrets" (DESIGN, invariants): tools get an
 * allow-list of harmless variables plus what the operator names with
 * --tool-env / AGENTWIRE_TOOL_ENV (src/tools/tool-environment.ts).
 */
import { realpathSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { DEFAULT_TOOL_ENV_ALLOW } from "../../protocol/config-tools.js";
import { parseCli, UsageError } from "../../src/cli-options.js";
import { defaultTools } from "../../src/tools/builtin-registry.js";
import { createShellTool } from "../../src/tools/shell.js";
import type { Tool } from "../../src/tools/tool.js";
import { toolEnvironment } from "../../src/tools/tool-environment.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { killAllCli, runCli } from "../harness/cli-process.js";

/** A server's environment as an operator might have it. */
const PARENT: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: "/home/op",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  OPENAI_API_KEY: "sk-live-secret",
  OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
  AGENTWIRE_TOKEN: "wire-secret",
  MY_VAR: "custom-value",
  MY_API_KEY: "my-secret",
  MY_DB_URL: "postgres://app:hunter2@db/app",
  MY_PLAIN_URL: "https://example.com/x",
  GITHUB_TOKEN: "ghp_secret",
  AWS_SECRET_ACCESS_KEY: "aws-secret",
  SSH_AUTH_SOCK: "/tmp/agent.sock",
  HTTPS_PROXY: "http://user:pw@proxy:3128",
};

async function envOf(tool: Tool): Promise<Record<string, string>> {
  const result = await tool.run(
    { command: "env" },
    { cwd: realpathSync(tmpdir()), conversationId: "c_test", signal: new AbortController().signal, timeoutMs: 10_000, onOutput: () => {} },
  );
  expect(result.success).toBe(true);
  return Object.fromEntries(
    result.output
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

describe("toolEnvironment (the policy)", () => {
  it("passes only the harmless defaults by default", () => {
    expect(toolEnvironment(PARENT)).toEqual({ PATH: process.env.PATH, HOME: "/home/op", LANG: "C.UTF-8", LC_ALL: "C.UTF-8" });
    expect(DEFAULT_TOOL_ENV_ALLOW).toContain("PATH");
  });

  it("passes an exactly named variable, even a secret: the operator asked for it", () => {
    const env = toolEnvironment(PARENT, ["MY_VAR", "GITHUB_TOKEN"]);
    expect(env.MY_VAR).toBe("custom-value");
    expect(env.GITHUB_TOKEN).toBe("ghp_secret");
    expect(env.OPENAI_API_KEY).toBeUndefined();
  });

  it("a wildcard never pulls in credential-looking names, server settings or URLs with a password", () => {
    const mine = toolEnvironment(PARENT, ["MY_*"]);
    expect(Object.keys(mine).filter((name) => name.startsWith("MY_")).sort()).toEqual(["MY_PLAIN_URL", "MY_VAR"]);
    const all = toolEnvironment(PARENT, ["*"]);
    for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTWIRE_TOKEN", "MY_API_KEY", "MY_DB_URL", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "HTTPS_PROXY"]) {
      expect(all[name], name).toBeUndefined();
    }
    expect(all.MY_VAR).toBe("custom-value");
  });

  it("a wildcard keeps out every common credential family, by name or by value, and passes ordinary variables", () => {
    const secrets: NodeJS.ProcessEnv = {
      // The ones `--tool-env '*'` passed before (issue 19, item 15).
      GH_PAT: "github-pat-value",
      SLACK_WEBHOOK_URL: "https://example.com/hook/abc",
      JWT: "jwt-value",
      CREDS: "creds-value",
      // Families by name.
      AZURE_DEVOPS_PAT: "x",
      PAT: "x",
      DISCORD_WEBHOOK: "x",
      JWT_SIGNING_SECRET: "x",
      GOOGLE_APPLICATION_CREDENTIALS: "/home/op/sa.json",
      STRIPE_API_KEY: "x",
      APIKEY: "x",
      AWS_ACCESS_KEY_ID: "x",
      SSH_KEYFILE: "x",
      JAVA_KEYSTORE: "x",
      CLIENT_SECRET_VALUE: "x",
      SMTP_PASSWORD: "x",
      PGPASSWORD: "x",
      MYSQL_PWD: "x",
      SMTP_PASS: "x",
      DB_PW: "x",
      NPM_TOKEN: "x",
      NODE_AUTH_TOKEN: "x",
      OAUTH_CLIENT: "x",
      BASIC_AUTH: "x",
      HTTP_AUTHORIZATION: "x",
      XAUTHORITY: "/home/op/.Xauthority",
      SESSION_COOKIE: "x",
      RAILS_SESSION: "x",
      SENTRY_DSN: "https://example.com/1",
      DATABASE_URL: "postgres://db/app",
      AZURE_STORAGE_CONNECTION_STRING: "x",
      HASH_SALT: "x",
      TOTP: "x",
      // Families by value, under harmless names.
      ENDPOINT: "https://api.example.com/v1?access_token=abc123",
      SIGNED: "https://bucket.example.com/o?X-Amz-Signature=abc",
      HEADER: "Bearer abcdefghijklmnop",
      TICKET: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
      PEM: "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
      SOMETHING: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      OTHER: "xoxb-123456789012-abcdefghij",
      HOOK: "https://hooks.slack.com/services/T000/B000/XXXX",
      AWS_ID: "AKIAIOSFODNN7EXAMPLE",
    };
    const ordinary: NodeJS.ProcessEnv = {
      PWD: "/work",
      OLDPWD: "/",
      KEYBOARD_LAYOUT: "us",
      XKB_DEFAULT_KEYMAP: "us",
      GIT_AUTHOR_NAME: "Op",
      GIT_AUTHOR_EMAIL: "op@example.com",
      JAVA_HOME: "/usr/lib/jvm",
      GOPATH: "/home/op/go",
      PATHEXT: ".EXE",
      EDITOR: "vi",
      DISPLAY: ":0",
      HISTSIZE: "1000",
      NODE_ENV: "development",
      NO_COLOR: "1",
      COLORTERM: "truecolor",
      PASSENGER_APP_ENV: "x",
      DOCS_URL: "https://example.com/docs?page=2",
    };
    const env = toolEnvironment({ PATH: "/usr/bin", ...secrets, ...ordinary }, ["*"]);
    for (const name of Object.keys(secrets)) expect(env[name], name).toBeUndefined();
    for (const [name, value] of Object.entries(ordinary)) expect(env[name], name).toBe(value);
    expect(env.PATH).toBe("/usr/bin");
    // Named exactly, each still passes: the operator asked for it.
    expect(toolEnvironment(secrets, ["GH_PAT", "SLACK_WEBHOOK_URL", "JWT", "CREDS"])).toMatchObject({
      GH_PAT: "github-pat-value",
      SLACK_WEBHOOK_URL: "https://example.com/hook/abc",
      JWT: "jwt-value",
      CREDS: "creds-value",
    });
  });

  it("refuses an entry that is not a name or a prefix", () => {
    expect(() => toolEnvironment(PARENT, ["MY VAR"])).toThrow(/MY VAR/);
    expect(() => toolEnvironment(PARENT, ["A*B"])).toThrow();
  });
});

describe("the shell tool's environment", () => {
  it("is the computed one: `env` shows neither secret, and a named variable passes", async () => {
    const scrubbed = await envOf(createShellTool({ env: toolEnvironment(PARENT) }));
    expect(scrubbed.OPENAI_API_KEY).toBeUndefined();
    expect(scrubbed.AGENTWIRE_TOKEN).toBeUndefined();
    expect(scrubbed.MY_VAR).toBeUndefined();
    expect(scrubbed.HOME).toBe("/home/op");
    const named = await envOf(createShellTool({ env: toolEnvironment(PARENT, ["MY_VAR"]) }));
    expect(named.MY_VAR).toBe("custom-value");
    expect(named.OPENAI_API_KEY).toBeUndefined();
  });

  describe("by default, from process.env", () => {
    const saved = { ...process.env };
    afterEach(() => {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    });

    it("createShellTool() and defaultTools() scrub it; defaultTools({ envAllow }) adds the named ones", async () => {
      Object.assign(process.env, { OPENAI_API_KEY: "sk-live-secret", AGENTWIRE_TOKEN: "wire-secret", MY_VAR: "custom-value" });
      for (const tool of [createShellTool(), defaultTools()[0]!]) {
        const env = await envOf(tool);
        expect(env.OPENAI_API_KEY).toBeUndefined();
        expect(env.AGENTWIRE_TOKEN).toBeUndefined();
        expect(env.MY_VAR).toBeUndefined();
        expect(env.PATH).toBe(process.env.PATH);
      }
      const allowed = await envOf(defaultTools({ envAllow: ["MY_VAR"] })[0]!);
      expect(allowed.MY_VAR).toBe("custom-value");
      expect(allowed.AGENTWIRE_TOKEN).toBeUndefined();
    });
  });
});

describe("--tool-env and AGENTWIRE_TOOL_ENV", () => {
  const serve = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseCli(["serve", ...argv], env).config!;

  it("defaults to no extra variables", () => {
    expect(serve([]).tools.envAllow).toEqual([]);
  });

  it("is repeatable and comma-separated, with NAME* prefixes", () => {
    expect(serve(["--tool-env", "MY_VAR", "--tool-env", "JAVA_HOME, NPM_CONFIG_*"]).tools.envAllow).toEqual([
      "MY_VAR",
      "JAVA_HOME",
      "NPM_CONFIG_*",
    ]);
  });

  it("comes from AGENTWIRE_TOOL_ENV when no flag is given; a flag replaces it", () => {
    expect(serve([], { AGENTWIRE_TOOL_ENV: "MY_VAR,GOPATH" }).tools.envAllow).toEqual(["MY_VAR", "GOPATH"]);
    expect(serve(["--tool-env", "OTHER"], { AGENTWIRE_TOOL_ENV: "MY_VAR" }).tools.envAllow).toEqual(["OTHER"]);
  });

  it("refuses what is not a variable name, naming the source", () => {
    expect(() => serve(["--tool-env", "MY-VAR"])).toThrow(UsageError);
    expect(() => serve(["--tool-env", "MY-VAR"])).toThrow(/--tool-env .*"MY-VAR"/);
    expect(() => serve([], { AGENTWIRE_TOOL_ENV: "A=B" })).toThrow(/AGENTWIRE_TOOL_ENV.*"A=B"/);
  });
});

describe("through the real server", { timeout: 30_000 }, () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await killAllCli();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("a model-proposed `env` sees neither OPENAI_API_KEY nor AGENTWIRE_TOKEN, and sees what --tool-env names", async () => {
    const fake = await startFakeOpenAI({ apiKey: "sk-live-secret" });
    try {
      const dataDir = await mkdtemp(join(tmpdir(), "agentwire-toolenv-"));
      dirs.push(dataDir);
      const cli = runCli(["serve", "--port", "0", "--data-dir", dataDir, "--log-level", "silent", "--tool-env", "MY_VAR"], {
        OPENAI_BASE_URL: fake.url,
        OPENAI_API_KEY: "sk-live-secret",
        AGENTWIRE_TOKEN: "wire-secret",
        AGENTWIRE_MODEL: "fake-model",
        MY_VAR: "custom-value",
        OTHER_VAR: "not-named",
      });
      const client = await AgentwireClient.connect(await cli.listening(20_000), { WebSocket: WebSocket as never, token: "wire-secret" });
      fake.enqueue({ kind: "reply", toolCalls: [{ id: "env_1", name: "shell", args: JSON.stringify({ command: "env" }) }] }, { kind: "reply", text: ["ok"] });
      const { id, events } = await newConversation(client);
      const { generationId } = await client.step({ conversationId: id, autoConfirm: true });
      const completed = await events.waitForMethod("tool_completed", 10_000);
      await events.waitForEnd(generationId, 10_000);
      await client.close();
      const output: string = completed.params.record.result;
      expect(output).toContain("MY_VAR=custom-value");
      expect(output).toContain("PATH=");
      for (const leaked of ["OPENAI_API_KEY", "AGENTWIRE_TOKEN", "sk-live-secret", "wire-secret", "OTHER_VAR"]) {
        expect(output).not.toContain(leaked);
      }
    } finally {
      await fake.close();
    }
  });
});
