/**
 * server.dataDir defaults to the user's own directory ($XDG_DATA_HOME/agentwire,
 * else ~/.local/share/agentwire), not `./.agentwire` in whatever directory a
 * command runs in; flag, environment and file still set it. A `.agentwire`
 * store an older version left in the working directory is not read unless
 * named, never moved, and a notice says how to use it.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve-config.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { eventually } from "../harness/eventually.js";

let root: string;
let cwd: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "agentwire-datadir-"));
  cwd = join(root, "project");
  await mkdir(cwd);
});
afterEach(async () => {
  await killAllCli();
  await rm(root, { recursive: true, force: true });
});

const resolveIn = (env: NodeJS.ProcessEnv, flags?: Record<string, unknown>) =>
  resolveConfig({ cwd, env, home: join(root, "home"), discover: false, ...(flags ? { flags: { label: "flags", values: flags } } : {}) });

it("defaults to $XDG_DATA_HOME/agentwire, else ~/.local/share/agentwire; a flag still wins", () => {
  expect(resolveIn({ XDG_DATA_HOME: join(root, "xdg-data") }).config.server.dataDir).toBe(join(root, "xdg-data", "agentwire"));
  expect(resolveIn({}).config.server.dataDir).toBe(join(root, "home", ".local", "share", "agentwire"));
  // Not absolute: ignored, as the XDG spec says.
  expect(resolveIn({ XDG_DATA_HOME: "relative/dir" }).config.server.dataDir).toBe(join(root, "home", ".local", "share", "agentwire"));
  expect(resolveIn({}, { server: { dataDir: "/srv/agentwire" } }).config.server.dataDir).toBe("/srv/agentwire");
  expect(resolveIn({}).merged.sources.get("server.dataDir")).toBe("default");
});

it("tells about a ./.agentwire store that is not the data dir in use, and not about a workspace's skills folder", async () => {
  await mkdir(join(cwd, ".agentwire", "skills"), { recursive: true });
  expect(resolveIn({}).notices).toEqual([]);

  await mkdir(join(cwd, ".agentwire", "conversations"));
  await writeFile(join(cwd, ".agentwire", "index.json"), "[]");
  const notices = resolveIn({}).notices;
  expect(notices).toHaveLength(1);
  expect(notices[0]).toMatchObject({ code: "data_dir_not_used" });
  expect(notices[0]!.message).toContain(join(cwd, ".agentwire"));
  expect(notices[0]!.message).toContain("--data-dir .agentwire");

  // Named explicitly (relative or absolute): it is the data dir in use, nothing to tell.
  expect(resolveIn({}, { server: { dataDir: ".agentwire" } }).notices).toEqual([]);
  expect(resolveIn({}, { server: { dataDir: join(cwd, ".agentwire") } }).notices).toEqual([]);
});

it("serve keeps conversations in the per-user dir, leaves ./.agentwire alone, and says how to use it", async () => {
  const dataHome = join(root, "data-home");
  await mkdir(join(cwd, ".agentwire", "conversations"), { recursive: true });
  await writeFile(join(cwd, ".agentwire", "index.json"), "[]");
  const serve = runCli(["serve", "--port", "0"], { XDG_DATA_HOME: dataHome }, undefined, cwd);
  await serve.listening();
  // The store is open (LOCK taken) once it listens.
  expect(await readdir(join(dataHome, "agentwire"))).toContain("LOCK");
  expect((await readdir(join(cwd, ".agentwire"))).sort()).toEqual(["conversations", "index.json"]);
  // Logged after the listening line, on the other pipe: it may arrive a moment later.
  const notice = /\.agentwire holds conversations from an older agentwire[^\n]*--data-dir \.agentwire/;
  await eventually(() => notice.test(serve.stderr()), 5000, "the notice on stderr").catch(() => {});
  expect(serve.stderr()).toMatch(notice);
  serve.child.kill("SIGTERM");
  await serve.exited;
}, 20_000);
