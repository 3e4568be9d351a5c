/**
 * The tools the configuration adds to the built-in ones: custom commands
 * (`tools.custom`) and the web tools (`tools.web`, off unless enabled).
 * Everything that can be wrong with them is found here, at start-up, and
 * thrown as a ToolConfigError naming the config field — never discovered by
 * the model on its first call.
 */
import type { CustomToolDefinition, WebSearchConfig, WebToolsConfig } from "../../protocol/config-tools.js";
import { createCustomTool } from "./custom-command.js";
import { ToolConfigError } from "./tool-config-error.js";
import { toolEnvironment } from "./tool-environment.js";
import type { Tool } from "./tool.js";
import { BRAVE_DEFAULT_URL, braveBackend, searxngBackend, type SearchBackend } from "./web/search-backends.js";
import { createWebFetchTool } from "./web/web-fetch.js";
import { createWebSearchTool } from "./web/web-search.js";

/** The configuration's `tools` as far as configured tools go (a parsed section, or one written by hand: the web tools apply their own defaults). */
export interface ConfiguredToolsConfig {
  custom: readonly CustomToolDefinition[];
  web: WebToolsConfig;
  envAllow: readonly string[];
  /** `tools.shell`: what custom tools run their command lines with (default bash -c, as the shell tool). */
  shell?: { command?: readonly string[] };
}

/**
 * The configured tools, in order: web_fetch, web_search, then the custom
 * ones. `builtins` are the tools already offered: a custom tool may not take
 * one of their names. `env` is the server's environment (for apiKeyEnv and
 * the tool environment).
 */
export function configuredTools(config: ConfiguredToolsConfig, builtins: readonly Tool[] = [], env: NodeJS.ProcessEnv = process.env): Tool[] {
  const tools: Tool[] = [];
  const fetchConfig = config.web.fetch;
  if (fetchConfig?.enabled) {
    tools.push(
      createWebFetchTool({
        maxBytes: fetchConfig.maxBytes,
        timeoutMs: fetchConfig.timeoutMs,
        maxOutputBytes: fetchConfig.maxOutputBytes,
        allowPrivateNetwork: config.web.allowPrivateNetwork,
      }),
    );
  }
  const searchConfig = config.web.search;
  if (searchConfig?.enabled) {
    tools.push(
      createWebSearchTool({ backend: searchBackend(searchConfig, env), maxResults: searchConfig.maxResults, timeoutMs: searchConfig.timeoutMs }),
    );
  }

  const taken = new Map<string, string>();
  for (const tool of builtins) taken.set(tool.name, `the built-in tool ${tool.name}`);
  for (const tool of tools) taken.set(tool.name, `the web tool ${tool.name}`);
  const toolEnv = config.custom.length > 0 ? toolEnvironment(env, config.envAllow) : {};
  config.custom.forEach((definition, index) => {
    const where = `tools.custom[${index}]`;
    const holder = taken.get(definition.name);
    if (holder !== undefined) {
      throw new ToolConfigError(`${where}: custom tool "${definition.name}": the name is already taken by ${holder}; rename it`);
    }
    taken.set(definition.name, `tools.custom[${index}]`);
    try {
      tools.push(createCustomTool(definition, { env: toolEnv, ...(config.shell?.command ? { shell: { command: config.shell.command } } : {}) }));
    } catch (error) {
      if (error instanceof ToolConfigError) throw new ToolConfigError(`${where}: ${error.message}`);
      throw error;
    }
  });
  return tools;
}

function searchBackend(config: WebSearchConfig, env: NodeJS.ProcessEnv): SearchBackend {
  if (config.backend === "searxng") {
    if (!config.url) throw new ToolConfigError("tools.web.search.url: the searxng backend needs the instance's base URL (e.g. http://127.0.0.1:8888)");
    return searxngBackend(config.url);
  }
  let apiKey = config.apiKey;
  if (apiKey === undefined && config.apiKeyEnv !== undefined) {
    apiKey = env[config.apiKeyEnv];
    if (!apiKey) throw new ToolConfigError(`tools.web.search.apiKeyEnv: the environment variable ${config.apiKeyEnv} is not set (the brave backend needs its API key)`);
  }
  if (!apiKey) {
    throw new ToolConfigError("tools.web.search: the brave backend needs an API key: set apiKeyEnv to the name of the variable holding it (or apiKey)");
  }
  return braveBackend(config.url ?? BRAVE_DEFAULT_URL, apiKey);
}
