/**
 * vitest's configuration for `npm test` (and `npm run bench:smoke`), kept under test/ because the
 * repository's top level is fixed: the scripts pass it with --config.
 */
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";
import { SlowFirstSequencer } from "./slow-first-sequencer.js";

/**
 * Files that run in a worker of their own. Every other file shares its worker with the files run
 * before it (isolate: false): the modules of src/ are loaded once per worker instead of once per
 * file, which was about 0.4 s of CPU per file, a third of the suite's CPU on 2 cores. A file belongs
 * here when what it checks depends on the process as a whole: the V8 heap, event-loop delays,
 * fake timers, or process.env changed and put back.
 */
const OWN_WORKER = [
  "test/sessions/memory-soak.test.ts",
  "test/sessions/limits.test.ts",
  "test/tools/offload/main-thread-stalls.test.ts",
  "test/tools/offload/deadline-workers.test.ts",
  "test/tools/web/bounded-html.test.ts",
  "test/generation/approval-policy.test.ts",
  "test/generation/approval-scopes.test.ts",
  "test/mcp/mcp-tools.test.ts",
  "test/tools/tool-environment.test.ts",
  // Resets the module registry (vi.resetModules) to load the socket layer as a process that has not loaded ws.
  "test/transport/lazy-ws-upgrade.test.ts",
];

/**
 * The command line's --dir (npm test: test, npm run bench:smoke: bench): vitest gives it to the root
 * project only, not to the projects below, which would otherwise collect both folders.
 */
const dirFlag = process.argv.findIndex((arg) => arg === "--dir" || arg.startsWith("--dir="));
const dir = dirFlag === -1 ? undefined : process.argv[dirFlag]!.startsWith("--dir=") ? process.argv[dirFlag]!.slice(6) : process.argv[dirFlag + 1];

/** As globs: vitest matches include and exclude against paths relative to --dir. */
const ownWorker = OWN_WORKER.map((path) => `**/${path.replace(/^test\//, "")}`);

export default defineConfig({
  // The repository, not this folder: test paths and --dir are read from there.
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    // Builds dist/bundle and dist/web from the current source when it changed (once per run, before
    // any test file): the tests that start the shipped bundle use it and never build it themselves.
    globalSetup: ["test/harness/shipped-bundle.ts"],
    // agentwire.json's zod schema, loaded before each file as the CLI loads it when a configuration needs it.
    setupFiles: ["test/harness/config-schema-setup.ts"],
    // The per-user data dir and trust list ($XDG_DATA_HOME/agentwire) of an in-process server or
    // config a test builds without naming its own: never the real home's (child processes get the
    // same from test/harness/child-env.ts).
    env: { XDG_DATA_HOME: "/nonexistent/agentwire-test-data" },
    // The known-slow files first, so the two workers finish together (test/slow-first-sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      { extends: true, test: { name: "shared", dir, isolate: false, exclude: [...configDefaults.exclude, ...ownWorker] } },
      { extends: true, test: { name: "own-worker", dir, isolate: true, include: ownWorker } },
    ],
  },
});
