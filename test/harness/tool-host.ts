/**
 * A minimal "server" for process-lifetime tests: runs one shell tool call,
 * streams its output to stdout, and ends on its own when the call is done
 * (no process.exit: the reaper must not keep it alive). Tests kill it as
 * they would the real server.
 *
 *   node --import tsx test/harness/tool-host.ts "<command>"
 */
import { createShellTool } from "../../src/tools/shell.js";

const command = process.argv[2] ?? "true";
const result = await createShellTool().run(
  { command },
  { cwd: process.cwd(), conversationId: "c_test", signal: new AbortController().signal, timeoutMs: 60_000, onOutput: (_stream, text) => process.stdout.write(text) },
);
process.stderr.write(`[tool-host: ${result.success ? "done" : "failed"}]\n`);
