import type * as z from "zod";
import type { ToolSpec } from "../../protocol/tools.js";
import type { Tool } from "./tool.js";
import { toolDisplay } from "./tool-display.js";
import { isLazyParameters } from "./tool-parameters.js";

/**
 * JSON Schema (draft 7) of a tool's arguments as the model should write them
 * (`io: "input"`: optional and defaulted fields are not required). `$schema`
 * is dropped: the OpenAI tools API and tools.list do not want it. Through the
 * schema's own method, so this module does not import zod: a process that
 * has a zod schema to convert has loaded it.
 */
export function toolParametersJsonSchema(schema: z.ZodType): Record<string, unknown> {
  // Converted once per schema (zod schemas do not change): tool specs are derived again for every
  // model call of a conversation with client or conversation MCP tools, and a conversion costs ~0.5 ms.
  const cached = converted.get(schema);
  if (cached) return cached;
  const { $schema: _dropped, ...rest } = schema.toJSONSchema({ target: "draft-7", io: "input" }) as Record<string, unknown>;
  converted.set(schema, rest);
  return rest;
}

const converted = new WeakMap<z.ZodType, Record<string, unknown>>();

/** The JSON Schema offered to the model for a tool's arguments. */
function parametersJsonSchema(tool: Tool): Record<string, unknown> {
  if (tool.inputSchema) return tool.inputSchema;
  if (!isLazyParameters(tool.parameters)) return toolParametersJsonSchema(tool.parameters);
  // A built-in tool's, written by npm run gen (builtin-tool-schemas.ts); missing only for a tool added since.
  if (tool.parameters.jsonSchema) return tool.parameters.jsonSchema;
  throw new Error(`no JSON Schema was written for the tool "${tool.name}": run npm run gen`);
}

/** What tools.list returns and what the LLM request offers for one tool. */
export function toolSpec(tool: Tool): ToolSpec {
  return {
    name: tool.name,
    description: tool.description,
    parameters: parametersJsonSchema(tool),
    annotations: { ...tool.annotations },
    source: tool.source ?? "builtin",
    ...toolDisplay(tool),
  };
}
