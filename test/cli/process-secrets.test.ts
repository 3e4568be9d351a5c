/**
 * The parts of keeping secrets out of /proc/$PPID and ps that the bundle test
 * (test/bundle/bundle.test.ts, "the serving process holds no secret…") does not
 * show one by one: how the process title masks values, that a failure to
 * clear the environment is one warning and not a crash, and --token-file.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCli, UsageError } from "../../src/cli-options.js";
import { maskedArgs, processTitle } from "../../src/process-secrets.js";
import { killAllCli, REPO_ROOT, runCli } from "../harness/cli-process.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-process-secrets-"));
});
afterAll(async () => {
  await killAllCli();
  await rm(dir, { recursive: true, force: true });
});

describe("the process title", () => {
  it("masks --token values and passwords or tokens in URLs, and keeps everything else", () => {
    expect(
      maskedArgs([
        "serve",
        "--port",
        "8765",
        "--token",
        "t-one",
        "--token=t-two",
        "--store",
        "postgres://app:hunter2@db:5432/agentwire",
        "--redis",
        "redis://:s3cret@cache:6379",
        "--token-file",
        "/run/secrets/agentwire",
      ]),
    ).toEqual([
      "serve",
      "--port",
      "8765",
      "--token",
      "***",
      "--token=***",
      "--store",
      "postgres://app:***@db:5432/agentwire",
      "--redis",
      "redis://:***@cache:6379",
      "--token-file",
      "/run/secrets/agentwire",
    ]);
    expect(processTitle(["chat", "--url", "ws://host:1/?token=abc&x=1", "hello"])).toBe("agentwire chat --url ws://host:1/?token=***&x=1 hello");
    expect(processTitle(["serve", "--token"])).toBe("agentwire serve --token");
  });
});

describe.skipIf(process.platform !== "linux")("when the environment cannot be cleared", () => {
  it("hideProcessSecrets returns one warning line and process.env still works", () => {
    const tsx = pathToFileURL(join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;
    const module = pathToFileURL(join(REPO_ROOT, "src/process-secrets.ts")).href;
    const script = `
      import { hideProcessSecrets } from ${JSON.stringify(module)};
      const warning = hideProcessSecrets(["serve"], { memPath: "/nonexistent/mem" });
      console.log(JSON.stringify({ warning, secret: process.env.SOME_SECRET }));`;
    const out = execFileSync(process.execPath, ["--import", tsx, "--input-type=module", "-e", script], {
      env: { PATH: process.env.PATH, SOME_SECRET: "still-here" },
      encoding: "utf8",
    });
    const { warning, secret } = JSON.parse(out) as { warning: string; secret: string };
    expect(secret).toBe("still-here");
    expect(warning).toMatch(/^could not clear its environment from \/proc\/\d+\/environ \(ENOENT\): other processes of this user, tools included, can read them there$/);
  });
});

describe("--token-file", () => {
  const serve = (...argv: string[]) => parseCli(["serve", ...argv], {}, { discover: false });
  const usage = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      if (error instanceof UsageError) return error.message;
      throw error;
    }
    throw new Error("expected a UsageError");
  };

  it("reads the token once, trimmed, for serve and for chat and conversations (embedded or --url)", async () => {
    const file = join(dir, "token");
    await writeFile(file, "  file-token-1\n\n");
    const parsed = serve("--token-file", file);
    expect(parsed.config!.server.token).toBe("file-token-1");
    expect(parsed.resolved!.merged.sources.get("server.token")).toBe("flag --token-file");
    expect(parseCli(["chat", "hi", "--url", "ws://127.0.0.1:1", "--token-file", file], {}).chat!.target.token).toBe("file-token-1");
    expect(parseCli(["chat", "hi", "--token-file", file], {}, { discover: false }).chat!.target).toMatchObject({
      token: "file-token-1",
      embedded: { server: { token: "file-token-1" } },
    });
    expect(parseCli(["conversations", "list", "--url", "ws://127.0.0.1:1", "--token-file", file], {}).conversations!.target.token).toBe("file-token-1");
    // The flag wins over the variable, as --token does.
    expect(parseCli(["serve", "--token-file", file], { AGENTWIRE_TOKEN: "env-token" }, { discover: false }).config!.server.token).toBe("file-token-1");
  });

  it("names the file and the problem: missing, empty, a directory, a FIFO (without hanging), several lines; and not with --token", async () => {
    const missing = join(dir, "missing");
    expect(usage(() => serve("--token-file", missing))).toMatch(new RegExp(`^--token-file ${missing}: cannot be read \\(ENOENT: `));
    const empty = join(dir, "empty");
    await writeFile(empty, " \n");
    expect(usage(() => serve("--token-file", empty))).toBe(`--token-file ${empty}: the file is empty`);
    expect(usage(() => serve("--token-file", dir))).toBe(`--token-file ${dir}: not a regular file`);
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    expect(usage(() => serve("--token-file", fifo))).toBe(`--token-file ${fifo}: not a regular file`);
    const lines = join(dir, "lines");
    await writeFile(lines, "one\ntwo\n");
    expect(usage(() => serve("--token-file", lines))).toContain("holds more than one line");
    expect(usage(() => serve("--token-file", lines, "--token", "x"))).toBe("--token and --token-file cannot go together");
    expect(usage(() => parseCli(["chat", "hi", "--url", "ws://127.0.0.1:1", "--token", "x", "--token-file", lines], {}))).toBe(
      "--token and --token-file cannot go together",
    );
  });

  it("the CLI: an unreadable token file is exit 2 with one line", { timeout: 20_000 }, async () => {
    const cli = runCli(["serve", "--port", "0", "--data-dir", join(dir, "data"), "--token-file", join(dir, "missing")]);
    expect((await cli.exited).code).toBe(2);
    expect(cli.stderr()).toMatch(/^agentwire: --token-file \S+missing: cannot be read \(ENOENT: [^\n]*\nRun agentwire serve --help for usage\.\n$/);
  });
});
