/**
 * src/tools/builtin-tool-schemas.ts holds the JSON Schema of each built-in
 * tool's parameters, converted at build time so that no process converts
 * them at its first model call; the server presets them (server.ts). They
 * must be what zod's converter gives: `npm run gen` writes the file again
 * after a tool's parameters change (gen:check fails until then).
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { builtinToolsForSchemas as builtinTools, convertedParameters as converted } from "../../src/codegen/builtin-tool-schemas.js";
import { BUILTIN_TOOL_SCHEMAS } from "../../src/tools/builtin-tool-schemas.js";
import { presetParametersJsonSchemas, toolParametersJsonSchema } from "../../src/tools/json-schema.js";
import type { Tool } from "../../src/tools/tool.js";

describe("the built-in tools' JSON Schemas, converted at build time", () => {
  it("are what zod's converter gives each built-in tool's parameters, for every built-in tool", () => {
    const expected = Object.fromEntries(builtinTools().map((tool) => [tool.name, converted(tool)]));
    expect(BUILTIN_TOOL_SCHEMAS, "stale: run npm run gen").toEqual(expected);
  });

  it("hold no character beyond Latin-1, nor do the tools' names and descriptions", () => {
    // The tools are most of every model request's body, which is one string: a single character past U+00FF
    // anywhere in it (an en dash in a description once) makes V8 store the whole body two bytes a character,
    // twice the memory per call, and Node's UTF-8 length scan and encoding each take about twice as long.
    const texts = [JSON.stringify(BUILTIN_TOOL_SCHEMAS), ...builtinTools().flatMap((tool) => [tool.name, tool.description])];
    for (const text of texts) expect(text.match(/[^\u0000-\u00ff]/gu) ?? [], text.slice(0, 80)).toEqual([]);
  });

  it("once preset, toolParametersJsonSchema gives them without converting", () => {
    // Fresh schema objects: the built-ins' own may have been converted already by another file of this worker.
    const tools = builtinTools().map((tool) => ({ ...tool, parameters: tool.parameters.clone() }));
    presetParametersJsonSchemas(tools, BUILTIN_TOOL_SCHEMAS);
    for (const tool of tools) expect(toolParametersJsonSchema(tool.parameters)).toBe(BUILTIN_TOOL_SCHEMAS[tool.name]);
    // A tool of a built-in's name with other parameters (not built in) is not given the preset.
    const other: Tool = { ...tools[0]!, parameters: z.strictObject({ x: z.string() }) };
    presetParametersJsonSchemas([{ ...other, inputSchema: { type: "object" } }], BUILTIN_TOOL_SCHEMAS);
    expect(toolParametersJsonSchema(other.parameters)).toEqual(converted(other));
  });
});
