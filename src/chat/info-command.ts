/**
 * `agentwire models`, `agentwire tools`, `agentwire status`: what a server
 * offers and how it is, through the protocol (models.list, tools.list,
 * server.status) like any client — a running server with --url, or one
 * embedded for the command. --json prints the method's result as it is.
 */
import type { AgentwireClient, ModelsListResult, ServerStatusResult, ToolsListResult } from "../../clients/typescript/index.js";
import type { InfoArgs } from "./chat-options.js";
import { describeError } from "./chat-session.js";
import { ConnectError, connectOrEmbed } from "./connect-or-embed.js";
import { columns, palette, summaryLine, wantsColor } from "./render.js";

export type InfoCommand = "models" | "tools" | "status";

interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

type Colors = ReturnType<typeof palette>;

const ask: Record<InfoCommand, (client: AgentwireClient) => Promise<unknown>> = {
  models: (client) => client.models.list(),
  tools: (client) => client.tools.list(),
  status: (client) => client.server.status(),
};

function modelsText(result: ModelsListResult, colors: Colors): string {
  const lines: string[] = [];
  for (const provider of result.providers) {
    const state = provider.status === "ok" ? colors.green("ok") : colors.red(`${provider.status}${provider.error ? `: ${provider.error}` : ""}`);
    lines.push(`${colors.bold(provider.name)}  ${provider.wire}  ${provider.baseUrl}  ${state}`);
    for (const model of result.models.filter((m) => m.provider === provider.name)) {
      // The default may be named bare (it then goes to the default provider) or as provider/model.
      const isDefault = model.id === result.defaultModel || (model.provider === result.defaultProvider && model.modelId === result.defaultModel);
      const notes = [isDefault ? "default" : "", model.declared ? "declared" : "", model.listed ? "" : "not listed"].filter(Boolean);
      lines.push(`  ${model.id}${notes.length > 0 ? `  ${colors.dim(notes.join(", "))}` : ""}`);
    }
  }
  lines.push(`default model: ${result.defaultModel ?? "none (set AGENTWIRE_MODEL or --model)"}`);
  return `${lines.join("\n")}\n`;
}

function toolsText(result: ToolsListResult): string {
  return `${columns(result.tools.map((t) => [t.name, t.source, summaryLine(t.description)])).join("\n")}\n`;
}

function statusText(s: ServerStatusResult, colors: Colors): string {
  const rows: [string, string][] = [
    ["version", s.version],
    ["instance", s.instanceId],
    ["uptime", `${Math.round(s.uptimeMs / 1000)} s`],
    ["connections", `${s.connections} (${s.initializedConnections} initialized, ${s.subscriptions} subscriptions)`],
    ["conversations", `${s.conversationsStored} stored, ${s.conversationsLoaded} loaded, ${s.conversationsActive} active`],
    ["generations", `${s.generations} running, ${s.pendingToolCalls} tool calls waiting`],
    ["mcp", `${s.mcp.servers} servers: ${s.mcp.connected} connected, ${s.mcp.failed} failed; ${s.mcp.tools} tools`],
    ["cluster", s.cluster ? `node ${s.cluster.nodeId}, owns ${s.cluster.ownedCount} conversations` : "single instance"],
    ["memory", `rss ${Math.round(s.memory.rss / 2 ** 20)} MiB, heap ${Math.round(s.memory.heapUsed / 2 ** 20)} MiB`],
  ];
  if (s.damagedConversations.length > 0) rows.push(["damaged", colors.red(`${s.damagedConversations.length} conversations cannot be read`)]);
  return `${rows.map(([label, value]) => `${colors.bold(label.padEnd(13))} ${value}`).join("\n")}\n`;
}

export async function runInfo(command: InfoCommand, args: InfoArgs, io: Io = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  let connection;
  try {
    connection = await connectOrEmbed(args.target, `agentwire-${command}`);
  } catch (error) {
    io.stderr.write(`agentwire: ${error instanceof ConnectError ? error.message : describeError(error)}\n`);
    return 1;
  }
  try {
    const result = await ask[command](connection.client);
    const colors = palette(wantsColor(io.stdout));
    if (args.json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (command === "models") io.stdout.write(modelsText(result as ModelsListResult, colors));
    else if (command === "tools") io.stdout.write(toolsText(result as ToolsListResult));
    else io.stdout.write(statusText(result as ServerStatusResult, colors));
    return 0;
  } catch (error) {
    io.stderr.write(`agentwire: ${command} failed: ${describeError(error)}\n`);
    return 1;
  } finally {
    await connection.close().catch(() => {});
  }
}
