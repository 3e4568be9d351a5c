/**
 * Preloaded into a process under test with NODE_OPTIONS=--require=<this
 * file> and AGENTWIRE_TEST_NODE_MODULES=FILE: at exit, writes the process's
 * `process.moduleLoadList` (Node's own modules and bindings it loaded, in
 * order) to FILE, one per line. CommonJS, so that preloading it does not
 * start Node's ES module loader itself, as an --import preload would.
 */
"use strict";
const { writeFileSync } = require("node:fs");

const file = process.env.AGENTWIRE_TEST_NODE_MODULES;
if (file) process.on("exit", () => writeFileSync(file, `${process.moduleLoadList.join("\n")}\n`));
