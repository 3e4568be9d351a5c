/**
 * Every test file's first step (vitest setupFiles): load agentwire.json's zod
 * schema, as src/cli.ts does when a configuration needs it, so that a test
 * that resolves or checks configuration in-process gets zod's error messages.
 * The path without it (ConfigSchemaNeeded, then the CLI's retry) is tested in
 * test/config/config-check.test.ts and through the shipped bundle.
 */
import { loadConfigSchema } from "../../src/config/config-check.js";

await loadConfigSchema();
