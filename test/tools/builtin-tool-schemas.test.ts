/**
 * src/tools/builtin-tool-schemas.ts holds each built-in tool's parameters as
 * the JSON Schema offered to the model and as data (protocol/schema-data.ts),
 * both converted at build time from the tool's zod schema, so that no
 * process loads zod or builds those schemas to offer the tools or run a valid
 * call (src/tools/tool-parameters.ts). They must be what zod gives: `npm run
 * gen` writes the file again after a tool's parameters change (gen:check
 * fails until then), and the parse as data must agree with zod's.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { schemaNode } from "../../protocol/schema-data-build.js";
import { BUILTIN_ARGUMENT_SCHEMAS, builtinToolsForSchemas as builtinTools, convertedParameters as converted } from "../../src/codegen/builtin-tool-schemas.js";
import { BUILTIN_TOOL_ARGUMENTS, BUILTIN_TOOL_SCHEMAS } from "../../src/tools/builtin-tool-schemas.js";
import { toolParametersJsonSchema, toolSpec } from "../../src/tools/json-schema.js";
import type { Tool } from "../../src/tools/tool.js";
import { isLazyParameters, type LazyParameters } from "../../src/tools/tool-parameters.js";
import { argumentsNow, checkArguments } from "../../src/tools/validate-arguments.js";
import { agree, mutator, newTally } from "../harness/schema-agreement.js";

const lazy = (tool: Tool): LazyParameters<Record<string, unknown>> => {
  if (!isLazyParameters(tool.parameters)) throw new Error(`${tool.name}: its parameters are a zod schema, not built-in parameters`);
  return tool.parameters;
};

/** Arguments each built-in tool is called with, valid and not. */
const EXAMPLES: Record<string, unknown[]> = {
  shell: [{ command: "ls -la" }, { command: "npm test", timeoutMs: 5000 }, { command: "" }, { command: "x", timeoutMs: 1.5 }, { command: "x", cwd: "/" }],
  read_file: [{ path: "a.ts" }, { path: "a.ts", offset: 10, limit: 2000 }, { path: "a.ts", limit: 2001 }, { path: "" }, { path: "a", offset: 0 }],
  write_file: [{ path: "a.ts", content: "" }, { path: "a.ts", content: "x\n" }, { path: "a.ts" }, { content: "x" }],
  edit_file: [{ path: "a", old_string: "x", new_string: "" }, { path: "a", old_string: "x", new_string: "y", replace_all: true }, { path: "a", old_string: "", new_string: "y" }],
  list_files: [{}, { path: "src" }, { glob: "**/*.ts" }, { path: "" }, { glob: 5 }],
  search_files: [{ pattern: "TODO" }, { pattern: "a", path: "src", glob: "*.ts", case_insensitive: true }, { pattern: "" }, { pattern: "a", case_insensitive: "yes" }],
  ask_user: [{ question: "Which?" }, { question: "Which?", choices: ["a", "b"], multiple: true }, { question: " " }, { question: "Q", choices: ["a", "a"] }],
  update_plan: [{ entries: [] }, { entries: [{ content: "Do it", status: "pending" }] }, { entries: [{ content: "x", status: "done" }] }],
  load_skill: [{ name: "pdf" }, { name: "" }, { name: "x".repeat(65) }],
  spawn_agent: [{ prompt: "Find the bug" }, { prompt: "x", mode: "plan", model: "m" }, { prompt: "" }, { prompt: "x", mode: "" }],
};

describe("the built-in tools' parameters, converted at build time", () => {
  it("load the zod schema the generator converted, once", async () => {
    for (const tool of builtinTools()) {
      const parameters = lazy(tool);
      const schema = await parameters.schema();
      expect(schema, tool.name).toBe(BUILTIN_ARGUMENT_SCHEMAS[tool.name]);
      expect(await parameters.schema()).toBe(schema);
    }
    expect(Object.keys(BUILTIN_ARGUMENT_SCHEMAS).sort()).toEqual(builtinTools().map((tool) => tool.name).sort());
  });

  it("as JSON Schema are what zod's converter gives, and what the tools offer", () => {
    const expected = Object.fromEntries(builtinTools().map((tool) => [tool.name, converted(BUILTIN_ARGUMENT_SCHEMAS[tool.name]!)]));
    expect(BUILTIN_TOOL_SCHEMAS, "stale: run npm run gen").toEqual(expected);
    for (const tool of builtinTools()) expect(toolSpec(tool).parameters).toBe(BUILTIN_TOOL_SCHEMAS[tool.name]);
    // A zod schema of a tool that is not built in is converted through its own method, as zod's converter does.
    const other = z.strictObject({ x: z.string().describe("an x"), n: z.number().int().optional() });
    expect(toolParametersJsonSchema(other)).toEqual(converted(other));
  });

  it("as data are the generator's conversion of each zod schema", () => {
    const expected = Object.fromEntries(builtinTools().map((tool) => [tool.name, schemaNode(BUILTIN_ARGUMENT_SCHEMAS[tool.name]!)]));
    expect(BUILTIN_TOOL_ARGUMENTS, "stale: run npm run gen").toEqual(expected);
    // The tools whose arguments are plain data; the others reach an anonymous refinement or a trim, which zod decides.
    const opaque = (node: unknown): boolean => JSON.stringify(node).includes('"opaque"');
    expect(builtinTools().filter((tool) => !opaque(BUILTIN_TOOL_ARGUMENTS[tool.name])).map((tool) => tool.name).sort()).toEqual(
      ["edit_file", "list_files", "load_skill", "read_file", "search_files", "shell", "spawn_agent", "write_file"],
    );
  });

  it("as data agree with zod over examples and seeded mutations of them", () => {
    const tally = newTally();
    const { mutate, pick } = mutator(31);
    for (const tool of builtinTools()) {
      const cases = EXAMPLES[tool.name];
      expect(cases, `examples for ${tool.name}`).toBeDefined();
      const node = BUILTIN_TOOL_ARGUMENTS[tool.name]!;
      const schema = BUILTIN_ARGUMENT_SCHEMAS[tool.name]!;
      for (const value of cases!) agree(node, schema, value, `${tool.name} example`, tally);
      for (let i = 0; i < 200; i++) agree(node, schema, mutate(pick(cases!)), `${tool.name} mutation`, tally);
    }
    expect(tally.accepted).toBeGreaterThan(100);
    expect(tally.refused).toBeGreaterThan(100);
  });

  it("check a call's arguments as data, and with zod's words when the data refuses them", async () => {
    const shell = builtinTools().find((tool) => tool.name === "shell")!;
    expect(argumentsNow(shell.parameters, { command: "ls" })).toEqual({ ok: true, value: { command: "ls" } });
    // Refused as data: only zod words why, so only the asynchronous check answers.
    expect(argumentsNow(shell.parameters, { command: 5 })).toBeUndefined();
    expect(await checkArguments(shell.parameters, { command: 5 })).toEqual({
      ok: false,
      issues: [{ path: "command", code: "invalid_type", message: expect.stringContaining("expected string") }],
    });
  });

  it("hold no character beyond Latin-1, nor do the tools' names and descriptions", () => {
    // The tools are most of every model request's body, which is one string: a single character past U+00FF
    // anywhere in it (an en dash in a description once) makes V8 store the whole body two bytes a character,
    // twice the memory per call, and Node's UTF-8 length scan and encoding each take about twice as long.
    const texts = [JSON.stringify(BUILTIN_TOOL_SCHEMAS), ...builtinTools().flatMap((tool) => [tool.name, tool.description])];
    for (const text of texts) expect(text.match(/[^\u0000-\u00ff]/gu) ?? [], text.slice(0, 80)).toEqual([]);
  });
});
