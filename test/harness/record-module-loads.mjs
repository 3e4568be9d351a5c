/**
 * Preloaded into a process under test (module-loads.ts gives the
 * environment: NODE_OPTIONS=--import=<this file's URL> and
 * AGENTWIRE_TEST_MODULE_LOADS=FILE): appends the URL of every ES module the
 * process — and each of its worker threads, which run the preload too —
 * loads to FILE, one per line. Plain JavaScript: the bundle runs in plain
 * node, without tsx.
 */
import { register } from "node:module";

if (process.env.AGENTWIRE_TEST_MODULE_LOADS) {
  register("./record-module-loads-hooks.mjs", import.meta.url, { data: { file: process.env.AGENTWIRE_TEST_MODULE_LOADS } });
}
