import { createAskUserTool } from "./ask-user.js";
import { createFileTools } from "./files/file-tools.js";
import type { OpenFileOptions } from "./files/workspace-open.js";
import { createUpdatePlanTool } from "./plan/update-plan.js";
import { createShellTool, type ShellToolOptions } from "./shell.js";
import { toolEnvironment } from "./tool-environment.js";
import type { Tool, ToolProvider, ToolRegistry } from "./tool.js";

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
    revision: () => 0,
  };
}

/**
 * A registry over fixed tools followed by providers whose tools come and go
 * (MCP servers). A name already taken by an earlier tool is not offered
 * again: the first one wins, and `onConflict` hears of the other.
 */
export function createToolRegistry(
  fixed: Tool[],
  providers: ToolProvider[] = [],
  onConflict: (name: string) => void = () => {},
): ToolRegistry {
  const base = createBuiltinRegistry(fixed);
  let cachedRevision = -1;
  let cached: { list: Tool[]; byName: Map<string, Tool> } = { list: [], byName: new Map() };
  const revision = () => providers.reduce((sum, p) => sum + (p.revision?.() ?? 0), 0);
  const current = () => {
    const now = revision();
    if (now !== cachedRevision || providers.length === 0) {
      const byName = new Map(base.list().map((t) => [t.name, t] as const));
      const list = base.list();
      for (const provider of providers) {
        for (const tool of provider.list()) {
          if (byName.has(tool.name)) {
            onConflict(tool.name);
            continue;
          }
          byName.set(tool.name, tool);
          list.push(tool);
        }
      }
      cached = { list, byName };
      cachedRevision = now;
    }
    return cached;
  };
  return {
    list: () => [...current().list],
    get: (name) => current().byName.get(name),
    revision,
  };
}

export interface DefaultToolsOptions {
  shell?: ShellToolOptions;
  /**
   * Environment variables tools may see besides the harmless defaults
   * (`tools.envAllow`; see tool-environment.ts). Ignored by a
   * tool whose options already carry an `env`.
   */
  envAllow?: readonly string[];
  /** The file tools' options (config `tools.files`); default: hard-linked files refused. */
  files?: OpenFileOptions;
}

/** The tools every conversation gets: shell, the file tools, then update_plan and ask_user. Custom tools and MCP tools join later. */
export function defaultTools(options: DefaultToolsOptions = {}): Tool[] {
  // Computed once, from the environment the server started with.
  const env = options.shell?.env ?? toolEnvironment(process.env, options.envAllow);
  return [createShellTool({ ...options.shell, env }), ...createFileTools(options.files), createUpdatePlanTool(), createAskUserTool()];
}
