import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

/** With conversationId: the server-wide servers, then the conversation's own (loading it starts them, if it was not loaded). */
export const mcpList: Handlers["mcp.list"] = async (_params, { app }, runtime) => ({
  servers: [...(await app.mcp.servers()), ...(runtime ? app.mcp.conversations.infos(runtime.id) : [])],
});

export const mcpAdd: Handlers["mcp.add"] = async (params, { app }) => ({ server: await app.mcp.add(params.name, params.server) });

export const mcpRemove: Handlers["mcp.remove"] = async (params, { app }) => {
  await app.mcp.remove(params.name);
  return { removed: true as const };
};

export const mcpProbe: Handlers["mcp.probe"] = (params, { app }) => app.mcp.probe(params.server);
