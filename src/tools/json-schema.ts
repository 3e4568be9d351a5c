import * as z from "zod";
import type { ToolSpec } from "../../protocol/tools.js";
import type { Tool } from "./tool.js";
import { toolDisplay } from "./tool-display.js";

/**
 * JSON Schema (draft 7) of a tool's arguments as the model should write them
 * (`io: "input"`: optional and defaulted fields are not required). `$schema`
 * is dropped: the OpenAI tools API and tools.list do not want it.
 */
export function toolParametersJsonSchema(schema: z.ZodType): Record<string, unknown> {
  // Converted once per schema (zod schemas do not change): tool specs are derived again for every
  // model call of a conversation with client or conversation MCP tools, and a conversion costs ~0.5 ms.
  const cached = converted.get(schema);
  if (cached) return cached;
  const { $schema: _dropped, ...rest } = z.toJSONSchema(schema, { target: "draft-7", io: "input" }) as Record<string, unknown>;
  converted.set(schema, rest);
  return rest;
}

const converted = new WeakMap<z.ZodType, Record<string, unknown>>();

/**
 * Conversions done ahead of time: `schemas` (by tool name) are what
 * toolParametersJsonSchema gives these tools' parameters, written at build
 * time (builtin-tool-schemas.ts, for the built-in tools: ~5 ms of zod's
 * converter at the first model call of every process, a one-shot chat's
 * included). test/tools/builtin-tool-schemas.test.ts checks they are equal.
 */
export function presetParametersJsonSchemas(tools: readonly Tool[], schemas: Readonly<Record<string, Record<string, unknown>>>): void {
  for (const tool of tools) {
    const schema = schemas[tool.name];
    if (schema !== undefined && tool.inputSchema === undefined && !converted.has(tool.parameters)) converted.set(tool.parameters, schema);
  }
}

/** What tools.list returns and what the LLM request offers for one tool. */
export function toolSpec(tool: Tool): ToolSpec {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema ?? toolParametersJsonSchema(tool.parameters),
    annotations: { ...tool.annotations },
    source: tool.source ?? "builtin",
    ...toolDisplay(tool),
  };
}
