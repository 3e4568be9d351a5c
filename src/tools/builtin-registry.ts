import { createShellTool, type ShellToolOptions } from "./shell.js";
import { toolEnvironment } from "./tool-environment.js";
import type { Tool, ToolRegistry } from "./tool.js";

/** A registry over a fixed list of tools, in the order given. Names must be unique. */
export function createBuiltinRegistry(tools: Tool[]): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`duplicate tool name: ${tool.name}`);
    byName.set(tool.name, tool);
  }
  const ordered = [...tools];
  return {
    list: () => [...ordered],
    get: (name) => byName.get(name),
  };
}

export interface DefaultToolsOptions {
  shell?: ShellToolOptions;
  /**
   * Environment variables tools may see besides the harmless defaults
   * (`ServerConfig.toolEnvAllow`; see tool-environment.ts). Ignored by a
   * tool whose options already carry an `env`.
   */
  envAllow?: readonly string[];
}

/** The tools every conversation gets. File tools, custom tools and MCP tools join here later. */
export function defaultTools(options: DefaultToolsOptions = {}): Tool[] {
  // Computed once, from the environment the server started with.
  const env = options.shell?.env ?? toolEnvironment(process.env, options.envAllow);
  return [createShellTool({ ...options.shell, env })];
}
