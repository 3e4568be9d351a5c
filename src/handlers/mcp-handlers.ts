import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

export const mcpList: Handlers["mcp.list"] = async (_params, { app }) => ({ servers: await app.mcp.servers() });

export const mcpAdd: Handlers["mcp.add"] = async (params, { app }) => ({ server: await app.mcp.add(params.name, params.server) });

export const mcpRemove: Handlers["mcp.remove"] = async (params, { app }) => {
  await app.mcp.remove(params.name);
  return { removed: true as const };
};

export const mcpProbe: Handlers["mcp.probe"] = (params, { app }) => app.mcp.probe(params.server);
