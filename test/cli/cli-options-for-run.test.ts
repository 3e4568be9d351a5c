/**
 * The command line adds the configuration keys' flags (~40 a command) to
 * the command that runs alone (a start cost); help and what runs see the
 * same options as before.
 */
import { describe, expect, it } from "vitest";
import { parseCli } from "../../src/cli-options.js";
import { buildProgram } from "../../src/cli-program.js";

const quiet = { parsed: () => {}, out: () => {}, err: () => {} };
const longs = (program: ReturnType<typeof buildProgram>, name: string) =>
  program.commands.find((command) => command.name() === name)!.options.map((option) => option.long);

describe("options of the command that runs", () => {
  it("only the command that runs gets the configuration flags; without runs every command does", () => {
    const forServe = buildProgram({}, { discover: false }, { ...quiet, runs: "serve" });
    expect(longs(forServe, "serve")).toContain("--data-dir");
    expect(longs(forServe, "chat")).not.toContain("--data-dir");
    const whole = buildProgram({}, { discover: false }, quiet);
    expect(longs(whole, "chat")).toContain("--data-dir");
  });

  it("help for another command and the command that runs keep their flags", () => {
    const help = parseCli(["help", "chat"], {}, { discover: false });
    expect(help.command).toBe("help");
    expect(help.help?.text).toContain("--data-dir");
    const serve = parseCli(["serve", "--port", "0", "--data-dir", "/tmp/agentwire-x"], {}, { discover: false });
    expect(serve.config?.server.dataDir).toBe("/tmp/agentwire-x");
  });
});
