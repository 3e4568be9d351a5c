import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Builds dist/bundle and dist/web from the current source when it changed (once per run, before
    // any test file): the tests that start the shipped bundle use it and never build it themselves.
    globalSetup: ["test/harness/shipped-bundle.ts"],
  },
});
