/**
 * `npm run gen`: write the generated files (OpenRPC document, JSON Schema,
 * TypeScript client types, errors and methods, the reference pages in
 * docs/reference/) and the generated blocks of
 * hand-written guides (docs/clients.md's method list, docs/configuration.md's
 * copy of --help) from protocol/.
 * `npm run gen:check`: regenerate into a temp dir and compare with the files
 * on disk (for a block: only the text between its markers); exit 1 naming
 * every stale file.
 *
 * Options: `--out-dir DIR` writes (or, with --check, compares) under DIR
 * instead of the repository root; tests use it on a scratch copy.
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runGen } from "./gen-command.js";
import { renderBlocks, renderOutputs } from "./outputs.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { values } = parseArgs({ options: { check: { type: "boolean" }, "out-dir": { type: "string" } } });
const run = runGen(values.check === true, resolve(values["out-dir"] ?? root), renderOutputs(root), renderBlocks());
process.stdout.write(run.stdout);
process.stderr.write(run.stderr);
process.exitCode = run.status;
