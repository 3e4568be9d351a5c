/**
 * vitest's configuration for `npm test` (and `npm run bench:smoke`), kept under test/ because the
 * repository's top level is fixed: the scripts pass it with --config.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The repository, not this folder: test paths and --dir are read from there.
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    // Builds dist/bundle and dist/web from the current source when it changed (once per run, before
    // any test file): the tests that start the shipped bundle use it and never build it themselves.
    globalSetup: ["test/harness/shipped-bundle.ts"],
    // The per-user data dir and trust list ($XDG_DATA_HOME/agentwire) of an in-process server or
    // config a test builds without naming its own: never the real home's (child processes get the
    // same from test/harness/child-env.ts).
    env: { XDG_DATA_HOME: "/nonexistent/agentwire-test-data" },
  },
});
