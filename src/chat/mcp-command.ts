/**
 * `agentwire mcp list | add | remove | probe`: the MCP servers, through the
 * protocol (mcp.list, mcp.add, mcp.remove, mcp.probe) like any client.
 * add and remove change the user's configuration file (config-edit.ts), so
 * the server is there for every server started later, as codex and opencode
 * keep theirs; a running server that was reached is told at once. Without
 * one, nothing is started for add: the file is what counts.
 */
import type { McpListResult } from "../../clients/typescript/index.js";
import { AgentwireRpcError } from "../../clients/typescript/index.js";
import { addMcpServerToFile, ConfigEditError, removeMcpServerFromFile } from "../config/config-edit.js";
import type { ConnectionTarget, McpArgs } from "./chat-options.js";
import { describeError } from "./chat-session.js";
import { ConnectError, connectOrEmbed, type OpenConnection } from "./connect-or-embed.js";
import { columns, palette, summaryLine, wantsColor } from "./render.js";

type McpServerInfo = McpListResult["servers"][number];

/** How long `mcp list` waits for servers still making their first connection attempt. */
const SETTLE_MS = 15_000;
const SETTLE_POLL_MS = 200;

interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

/**
 * For add, remove and probe an embedded server need not start the servers
 * of the configuration: only mcp.remove (of one added through the protocol)
 * or mcp.probe is asked of it.
 */
function withoutConfiguredServers(target: ConnectionTarget): ConnectionTarget {
  return target.embedded ? { ...target, embedded: { ...target.embedded, mcpServers: {} } } : target;
}

/** A connection, or undefined when none could be made (said on stderr unless `quiet`: add and remove do their part without one). */
async function connect(target: ConnectionTarget, io: Io, quiet = false): Promise<OpenConnection | undefined> {
  try {
    return await connectOrEmbed(target, "agentwire-mcp");
  } catch (error) {
    if (!quiet) io.stderr.write(`agentwire: ${error instanceof ConnectError ? error.message : describeError(error)}\n`);
    return undefined;
  }
}

function stateWord(server: McpServerInfo, colors: ReturnType<typeof palette>): string {
  if (server.state === "connected") return colors.green("connected");
  if (server.state === "failed") return colors.red(`failed: ${server.error ?? "unknown error"}`);
  return colors.dim(server.state);
}

function describeServer(server: McpServerInfo, colors: ReturnType<typeof palette>): string {
  const lines = [`${colors.bold(server.name)}  ${server.transport}  ${server.origin === "config" ? "configuration file" : "added (mcp.add)"}  ${stateWord(server, colors)}`];
  lines.push(...columns(server.tools.map((tool) => [tool.name, summaryLine(tool.description)])).map((line) => `  ${line}`));
  return lines.join("\n");
}

export async function runMcp(args: McpArgs, io: Io = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const colors = palette(wantsColor(io.stdout));
  switch (args.action) {
    case "list":
      return list(args, io, colors);
    case "add":
      return add(args, io);
    case "remove":
      return remove(args, io);
    case "probe":
      return probe(args, io, colors);
  }
}

async function list(args: Extract<McpArgs, { action: "list" }>, io: Io, colors: ReturnType<typeof palette>): Promise<number> {
  const connection = await connect(args.target, io);
  if (!connection) return 1;
  try {
    // A server started for this command (or just now) is still connecting: wait, bounded, for its first attempt.
    let servers = (await connection.client.mcp.list()).servers;
    for (const started = Date.now(); servers.some((s) => s.state === "connecting") && Date.now() - started < SETTLE_MS; ) {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
      servers = (await connection.client.mcp.list()).servers;
    }
    if (args.json) io.stdout.write(`${JSON.stringify({ servers }, null, 2)}\n`);
    else if (servers.length === 0) io.stderr.write("no MCP servers (add one with agentwire mcp add NAME -- COMMAND…)\n");
    else io.stdout.write(`${servers.map((s) => describeServer(s, colors)).join("\n")}\n`);
    return 0;
  } catch (error) {
    io.stderr.write(`agentwire: mcp list failed: ${describeError(error)}\n`);
    return 1;
  } finally {
    await connection.close().catch(() => {});
  }
}

async function add(args: Extract<McpArgs, { action: "add" }>, io: Io): Promise<number> {
  try {
    addMcpServerToFile(args.configFile, args.name, args.server);
  } catch (error) {
    if (!(error instanceof ConfigEditError)) throw error;
    io.stderr.write(`agentwire: ${error.message}\n`);
    return 1;
  }
  const report: { name: string; configFile: string; server: typeof args.server; running: { url: string; server?: McpServerInfo; error?: string } | null } = {
    name: args.name,
    configFile: args.configFile,
    server: args.server,
    running: null,
  };
  const connection = await connect(withoutConfiguredServers(args.target), io, true);
  if (connection && !connection.embedded) {
    try {
      report.running = { url: connection.url, server: (await connection.client.mcp.add({ name: args.name, server: args.server })).server };
    } catch (error) {
      report.running = { url: connection.url, error: describeError(error) };
    }
  }
  await connection?.close().catch(() => {});
  if (args.json) {
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    io.stdout.write(`added MCP server "${args.name}" to ${args.configFile}\n`);
    const running = report.running;
    if (running?.server) io.stdout.write(`the server at ${running.url} started it: ${running.server.state}${running.server.error ? ` (${running.server.error})` : ""}\n`);
    else if (running?.error) io.stderr.write(`agentwire: the server at ${running.url} did not take it now (${running.error}); it will have it once restarted\n`);
    else io.stdout.write("no running server was reached: servers started from now on have it\n");
  }
  return 0;
}

async function remove(args: Extract<McpArgs, { action: "remove" }>, io: Io): Promise<number> {
  let fromFile: boolean;
  try {
    fromFile = removeMcpServerFromFile(args.configFile, args.name);
  } catch (error) {
    if (!(error instanceof ConfigEditError)) throw error;
    io.stderr.write(`agentwire: ${error.message}\n`);
    return 1;
  }
  const connection = await connect(withoutConfiguredServers(args.target), io, true);
  let fromServer: { url: string; removed: boolean; error?: string } | null = null;
  if (connection) {
    try {
      await connection.client.mcp.remove({ name: args.name });
      fromServer = { url: connection.url, removed: true };
    } catch (error) {
      // Not there, or from a configuration file: the server says which; only an answer that is no answer is a failure.
      if (!(error instanceof AgentwireRpcError)) fromServer = { url: connection.url, removed: false, error: describeError(error) };
      else fromServer = { url: connection.url, removed: false, error: error.message };
    }
    await connection.close().catch(() => {});
  }
  const removed = fromFile || fromServer?.removed === true;
  if (args.json) {
    io.stdout.write(`${JSON.stringify({ name: args.name, removed, configFile: fromFile ? args.configFile : null, server: fromServer && !connection?.embedded ? fromServer : null }, null, 2)}\n`);
  } else {
    if (fromFile) io.stdout.write(`removed MCP server "${args.name}" from ${args.configFile}\n`);
    if (fromServer?.removed) io.stdout.write(connection?.embedded ? `removed MCP server "${args.name}" added with mcp.add\n` : `the server at ${fromServer.url} stopped it\n`);
    else if (fromFile && fromServer && !connection?.embedded) io.stderr.write(`agentwire: the server at ${fromServer.url} keeps it until it restarts (${fromServer.error})\n`);
  }
  if (!removed) {
    io.stderr.write(`agentwire: no MCP server named "${args.name}" in ${args.configFile}${fromServer ? ` nor on the server (${fromServer.error})` : ""}\n`);
    return 1;
  }
  return 0;
}

async function probe(args: Extract<McpArgs, { action: "probe" }>, io: Io, colors: ReturnType<typeof palette>): Promise<number> {
  const connection = await connect(withoutConfiguredServers(args.target), io);
  if (!connection) return 1;
  try {
    const result = await connection.client.mcp.probe({ server: args.server });
    if (args.json) {
      io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } else {
      io.stdout.write(`${colors.bold(result.serverInfo.name)} ${result.serverInfo.version}: ${result.tools.length} tools\n`);
      for (const line of columns(result.tools.map((tool) => [tool.name, summaryLine(tool.description)]))) io.stdout.write(`  ${line}\n`);
    }
    return 0;
  } catch (error) {
    io.stderr.write(`agentwire: mcp probe failed: ${describeError(error)}\n`);
    return 1;
  } finally {
    await connection.close().catch(() => {});
  }
}
