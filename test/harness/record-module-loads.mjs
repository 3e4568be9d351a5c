/**
 * Preloaded into a process under test (module-loads.ts gives the
 * environment: NODE_OPTIONS=--import=<this file's URL> and
 * AGENTWIRE_TEST_MODULE_LOADS=FILE): appends the URL of every ES module the
 * process — and each of its worker threads, which run the preload too —
 * loads to FILE, one per line (the bundle's files the bin runs from their
 * CommonJS twins included, under their ES modules' URLs). Plain JavaScript: the bundle runs in plain
 * node, without tsx.
 */
import { appendFileSync } from "node:fs";
import { register } from "node:module";

if (process.env.AGENTWIRE_TEST_MODULE_LOADS) {
  const file = process.env.AGENTWIRE_TEST_MODULE_LOADS;
  register("./record-module-loads-hooks.mjs", import.meta.url, { data: { file } });
  // The bin runs the bundle's files from their CommonJS twins, which no module hook sees: its loader
  // (src/cli-loader.ts) pushes each one's ES module URL to this list instead.
  globalThis[Symbol.for("agentwire.cjs-twins.loaded")] = { push: (url) => appendFileSync(file, `${url}\n`) };
}
