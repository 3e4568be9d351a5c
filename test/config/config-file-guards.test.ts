/**
 * agentwire.json files that are not configuration files — a FIFO, a link to
 * /dev/zero, megabytes of whitespace, thousands of levels of nesting, a
 * `__proto__` key — each stop the real CLI with one clear line and exit 2:
 * no hang, no stack trace, no unbounded read, nothing slipped past the schema.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useShippedCli } from "../harness/shipped-cli.js";

const cli = useShippedCli();

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "agentwire-guards-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const cases: { name: string; make(file: string): Promise<void>; says: RegExp }[] = [
  { name: "a FIFO (which would block the open)", make: async (file) => mkfifo(file), says: /agentwire\.json: file: is not a regular file \(a FIFO\)$/ },
  { name: "a link to /dev/zero (endless)", make: (file) => symlink("/dev/zero", file), says: /agentwire\.json: file: is not a regular file \(a character device\)$/ },
  {
    name: "2 MiB of whitespace",
    make: (file) => writeFile(file, `{${" ".repeat(2 * 1024 * 1024)}}`),
    says: /agentwire\.json: file: is 2097154 bytes, more than the 1 MiB a configuration file may have$/,
  },
  {
    name: "10,000 levels of nesting",
    make: (file) => writeFile(file, `{ "tools": { "custom": ${"[".repeat(10_000)}${"]".repeat(10_000)} } }`),
    says: /agentwire\.json: line 1, column 86: nested deeper than 64 levels$/,
  },
  {
    name: "a __proto__ key (which would set the prototype, its keys applied unchecked)",
    make: (file) => writeFile(file, `{ "__proto__": { "model": "slipped-in" }, "limits": { "__proto__": { "maxBatch": 1 } } }`),
    says: /agentwire\.json: __proto__: unknown key \(misspelt, or not a setting of this version\); and limits\.__proto__: unknown key/,
  },
];

describe.concurrent("an agentwire.json that is not a configuration file: one clear line, exit 2, no hang", () => {
  it.each(cases)("$name", { timeout: 20_000 }, async ({ name, make, says }) => {
    const dir = join(root, name.split(" ").slice(0, 3).join("-").replace(/[^\w-]/g, ""));
    await mkdir(dir);
    await make(join(dir, "agentwire.json"));
    const run = cli(["serve", "--port", "0", "--data-dir", join(dir, "data")], {}, dir);
    const timer = setTimeout(() => run.child.kill("SIGKILL"), 15_000);
    const { code } = await run.exited;
    clearTimeout(timer);
    expect(code, run.stderr()).toBe(2);
    expect(run.stdout()).toBe("");
    const lines = run.stderr().trimEnd().split("\n");
    expect(lines, run.stderr()).toHaveLength(1);
    expect(lines[0]).toMatch(/^agentwire: bad configuration: /);
    expect(lines[0]).toMatch(says);
  });
});

function mkfifo(path: string): void {
  execFileSync("mkfifo", [path]);
}
