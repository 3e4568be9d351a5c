#!/usr/bin/env node
/**
 * `agentwire serve` — flags and environment into a ServerConfig, then the
 * one stdout line `agentwire listening on ws://HOST:PORT` once ready.
 * Logs go to stderr. The other commands (chat, acp, conversations, mcp, models,
 * tools, status, config, trust; src/cli-program.ts declares them all) are
 * loaded only when asked for.
 */
import { OPENAI_DEFAULT_BASE_URL } from "../protocol/provider-defaults.js";
import { parseCli, UsageError, usageHint } from "./cli-options.js";
import { ConfigSchemaNeeded, loadConfigSchema } from "./config/config-check.js";
import { ConfigFileError } from "./config/config-file.js";
import { hideProcessSecrets } from "./process-secrets.js";
import { SERVER_VERSION } from "./server-version.js";

/**
 * The command line parsed. A valid configuration is parsed without zod; one
 * that needs the configuration's zod schema (an error to word, a key with a
 * check of its own) makes the parse throw ConfigSchemaNeeded, and is parsed
 * again once the schema is loaded (config-check.ts).
 */
async function parseCommandLine(argv: string[]) {
  try {
    return parseCli(argv, process.env);
  } catch (error) {
    if (!(error instanceof ConfigSchemaNeeded)) throw error;
    await loadConfigSchema();
    return parseCli(argv, process.env);
  }
}

/**
 * Commands whose run checks configuration again after the parse: `trust` reads
 * the file it is to trust (config-file.ts), whose error zod words. They get the
 * zod schema first; every other command's configuration is checked in the parse.
 */
const CHECKS_CONFIG_AGAIN = new Set(["trust"]);

async function main(): Promise<void> {
  // First of all: tools (children of this process) must find no key or token in /proc/$PPID.
  const notHidden = hideProcessSecrets(process.argv.slice(2));
  if (notHidden) process.stderr.write(`agentwire: warning: ${notHidden}\n`);
  let parsed;
  try {
    parsed = await parseCommandLine(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`agentwire: ${error.message}\nRun ${usageHint(process.argv.slice(2))} for usage.\n`);
      process.exit(2);
    }
    if (error instanceof ConfigFileError) {
      process.stderr.write(`agentwire: bad configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (parsed.command === "help") {
    // Asked for: stdout, 0. Standing for a missing subcommand (`agentwire mcp`): stderr, 2.
    if (parsed.help!.error) {
      process.stderr.write(parsed.help!.text);
      process.exit(2);
    }
    process.stdout.write(parsed.help!.text);
    return;
  }
  if (parsed.command === "version") {
    process.stdout.write(`${SERVER_VERSION}\n`);
    return;
  }
  if (CHECKS_CONFIG_AGAIN.has(parsed.command)) await loadConfigSchema();
  // The client commands load lazily: serve's start-up does not pay for them.
  if (parsed.command === "chat") {
    const { runChat } = await import("./chat/chat-command.js");
    process.exit(await runChat(parsed.chat!));
  }
  if (parsed.command === "acp") {
    const { runAcp } = await import("./acp/acp-command.js");
    process.exit(await runAcp(parsed.acp!));
  }
  if (parsed.command === "conversations") {
    const { runConversations } = await import("./chat/conversations-command.js");
    process.exit(await runConversations(parsed.conversations!));
  }
  if (parsed.command === "mcp") {
    const { runMcp } = await import("./chat/mcp-command.js");
    process.exit(await runMcp(parsed.mcp!));
  }
  if (parsed.command === "models" || parsed.command === "tools" || parsed.command === "status") {
    const { runInfo } = await import("./chat/info-command.js");
    process.exit(await runInfo(parsed.command, parsed.info!));
  }
  if (parsed.command === "trust") {
    const { runTrust, TrustRefused } = await import("./config/trust-command.js");
    try {
      runTrust(parsed.trust!, { env: process.env }, (line) => process.stdout.write(`${line}\n`));
    } catch (error) {
      if (!(error instanceof TrustRefused || error instanceof ConfigFileError || error instanceof UsageError)) throw error;
      process.stderr.write(`agentwire: ${error instanceof ConfigFileError ? `bad configuration: ${error.message}` : error.message}\n`);
      process.exit(2);
    }
    return;
  }
  if (parsed.command === "config" && parsed.schema) {
    const { configSchemaPath } = await import("./config/config-schema-path.js");
    let path;
    try {
      path = configSchemaPath();
    } catch (error) {
      process.stderr.write(`agentwire: ${(error as Error).message}\n`);
      process.exit(1);
    }
    process.stdout.write(parsed.json ? `${JSON.stringify({ path })}\n` : `${path}\n`);
    return;
  }
  if (parsed.command === "config") {
    const { formatReport, reportJson } = await import("./config/config-report.js");
    process.stdout.write(parsed.json ? reportJson(parsed.resolved!) : formatReport(parsed.resolved!));
    return;
  }
  const config = parsed.config!;
  const { startServer, knownStartFailure, describeStore, killAllProcessGroups } = await import("./serve-start.js");
  let server;
  try {
    server = await startServer(config);
  } catch (error) {
    const known = knownStartFailure(error);
    if (known) {
      const hint = known.code === "EADDRINUSE" ? ` (port ${config.server.port} is in use; pick another with --port, or --port 0)` : "";
      // A skipped key may be why (a model on an untrusted file's provider): say what was skipped first.
      for (const notice of config.notices) process.stderr.write(`agentwire: ${notice.message}\n`);
      process.stderr.write(`agentwire: ${known.message}${hint}\n`);
      process.exit(1);
    }
    throw error;
  }
  // Before the listening line: a supervisor may send SIGTERM as soon as it reads it, and without a listener Node
  // would die of it at once, the store not closed. Tool process groups must not outlive the server, however it ends.
  process.on("exit", killAllProcessGroups);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1); // second signal: stop now
    stopping = true;
    server.app.log.info(`${signal}: shutting down`);
    server.close().then(
      () => process.exit(0),
      (error) => {
        server.app.log.error("shutdown failed", error);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.stdout.write(`agentwire listening on ${server.url}\n`);
  // What an operator needs to know at a glance (stderr; stdout keeps its one line).
  server.app.log.info(
    `${describeStore(config.server)}; model endpoint ${config.llm.baseUrl ?? `${OPENAI_DEFAULT_BASE_URL} (OPENAI_BASE_URL unset)`}; ` +
      `default model ${config.model ?? "none (set AGENTWIRE_MODEL or --model, or pass one per conversation or step)"}; ` +
      `token ${config.server.token ? "required" : "not required (loopback only)"}`,
  );
  // What the configuration left out (an untrusted or unreadable file), and how to put it back; clients get it in initialize.
  for (const notice of config.notices) server.app.log.warn(notice.message);
}

// A reader of stdout or stderr that went away (a parent that died, `| head`) makes the next write fail
// with EPIPE. Unheard, that error is an uncaught exception, whose report to stderr fails the same way on
// the next tick: a server spun at full CPU forever and never finished a SIGTERM. What is written there
// is lost either way; the clients on the WebSocket are not. (chat's own listener still exits on EPIPE.)
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
/** Writes to stderr unless it is gone. */
const report = (line: string) => {
  if (!process.stderr.destroyed) process.stderr.write(line);
};

// Last line of defence: log and keep serving rather than drop every client.
process.on("uncaughtException", (error) => report(`agentwire: uncaught exception: ${error.stack ?? error}\n`));
process.on("unhandledRejection", (error) => report(`agentwire: unhandled rejection: ${(error as Error)?.stack ?? error}\n`));

main().catch((error) => {
  process.stderr.write(`agentwire: failed to start: ${(error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
