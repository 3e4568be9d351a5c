import { createHash } from "node:crypto";

/** What the OpenAI tools API accepts as a function name. */
const MAX_NAME = 64;
const NOT_ALLOWED = /[^A-Za-z0-9_-]/g;

/**
 * The name the model calls an MCP tool by: `mcp__<server>__<tool>`. MCP tool
 * names may hold characters the model API refuses (dots, slashes) and may be
 * long; those become `_`, and a name still too long (or taken by another tool
 * of the same server after that) is shortened and given a hash of the
 * original, so two tools never share a name and the same tool keeps its name
 * across restarts.
 */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  const plain = `mcp__${server}__${tool.replace(NOT_ALLOWED, "_")}`;
  if (plain.length <= MAX_NAME && !taken.has(plain)) return plain;
  const hash = createHash("sha256").update(tool).digest("hex").slice(0, 8);
  return `${plain.slice(0, MAX_NAME - hash.length - 1)}_${hash}`;
}
