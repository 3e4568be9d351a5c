/**
 * tools.shell.command: the program a command line runs through, for the
 * shell tool and custom tools alike; default bash -c, as before. A command
 * that is no usable list stops the start naming the key; a program that is
 * not there is reported on the call, by name. The key needs a trusted file.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRUST_REQUIRED_CONFIG_PATHS } from "../../protocol/config.js";
import { parseCli } from "../../src/cli-options.js";
import { ConfigFileError } from "../../src/config/config-file.js";
import { configuredTools } from "../../src/tools/configured-tools.js";
import { createShellTool } from "../../src/tools/shell.js";
import type { Tool } from "../../src/tools/tool.js";

let dir: string;
let wrapper: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-shell-command-"));
  // A "shell" that says it ran, with the argument it was given before the line, then runs the line with sh.
  wrapper = join(dir, "my-shell");
  await writeFile(wrapper, '#!/bin/sh\necho "via my-shell $1"\nshift\nexec sh -c "$1"\n');
  await chmod(wrapper, 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

async function call(tool: Tool, args: Record<string, unknown>) {
  return tool.run(args as never, { cwd: dir, conversationId: "c_test", signal: new AbortController().signal, timeoutMs: 10_000, onOutput: () => {} });
}

describe("tools.shell.command", () => {
  it("runs the shell tool's and custom tools' command lines through the configured program", async () => {
    const shell = createShellTool({ env, command: [wrapper, "--login-ish"] });
    expect(shell.description).toContain(`${wrapper} --login-ish`);
    expect((await call(shell, { command: "echo hello" })).output).toBe("via my-shell --login-ish\nhello\n");

    const [custom] = configuredTools(
      { custom: [{ name: "greet", description: "greets", command: 'echo "hi $ARG_WHO"', parameters: { type: "object", properties: { who: { type: "string" } } } }], web: {}, envAllow: [], shell: { command: [wrapper, "-x"] } },
      [],
      env,
    );
    expect((await call(custom!, { who: "ann" })).output).toBe("via my-shell -x\nhi ann\n");
  });

  it("defaults to bash -c, and names a program that is not there", async () => {
    const shell = createShellTool({ env });
    expect(shell.description).toContain("`bash -c`");
    expect((await call(shell, { command: "echo $BASH_VERSION | cut -c1" })).output).toMatch(/^\d\n$/);
    const missing = await call(createShellTool({ env, command: ["no-such-shell-here", "-c"] }), { command: "true" });
    expect(missing).toMatchObject({ success: false, exitCode: null });
    expect(missing.output).toContain("no-such-shell-here was not found on PATH (tools.shell.command)");
  });

  it("refuses at start a command that is no non-empty list of strings, naming the key; it needs a trusted file", async () => {
    const xdg = join(dir, "xdg");
    await mkdir(join(xdg, "agentwire"), { recursive: true });
    const serveWith = (command: unknown) => {
      const file = join(xdg, "agentwire", "agentwire.json");
      return writeFile(file, JSON.stringify({ tools: { shell: { command } } })).then(() => {
        try {
          return parseCli(["serve"], { XDG_CONFIG_HOME: xdg, XDG_DATA_HOME: join(dir, "data") }, { cwd: dir });
        } catch (error) {
          if (error instanceof ConfigFileError) return error;
          throw error;
        }
      });
    };
    for (const bad of [[], [""], ["bash", 3], "bash -c", Array.from({ length: 17 }, () => "x")]) {
      const error = await serveWith(bad);
      expect(error, JSON.stringify(bad)).toBeInstanceOf(ConfigFileError);
      expect((error as ConfigFileError).where).toMatch(/^tools\.shell\.command/);
    }
    const ok = await serveWith(["zsh", "-c"]);
    expect(ok).not.toBeInstanceOf(ConfigFileError);
    expect(TRUST_REQUIRED_CONFIG_PATHS.map((p) => p.path)).toContain("tools.shell");
  });
});
