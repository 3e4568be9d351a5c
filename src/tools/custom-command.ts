/**
 * Custom tools: a command line from the configuration (`tools.custom`)
 * offered to the model as a tool, declared in JSON Schema.
 *
 * The command text is the operator's and is never altered. The model's
 * arguments reach it as data only — environment variables, `ARG_<NAME>` per
 * top-level argument and all of them as JSON in `AGENTWIRE_ARGS` — so an
 * argument like `'; rm -rf ~ #` is a string the command can quote, not shell
 * syntax. The command runs through the shell tool's machinery
 * (runCommandLine): same streaming, output cap, time limit, process-group
 * kill and reaper.
 */
import * as z from "zod";
import type { CustomToolDefinition } from "../../protocol/config-tools.js";
import { effectiveTimeout, runCommandLine, type ShellToolOptions } from "./shell.js";
import { ToolConfigError } from "./tool-config-error.js";
import type { Tool, ToolAnnotations } from "./tool.js";

export interface CustomToolOptions {
  /** The scrubbed tool environment (tool-environment.ts) the ARG_ variables are added to. */
  env: Readonly<Record<string, string>>;
  /** Output budgets and kill timing, as for the shell tool. */
  shell?: Omit<ShellToolOptions, "env">;
}

/** Linux refuses a single `NAME=value` environment string longer than this (MAX_ARG_STRLEN, E2BIG). */
const MAX_ENV_STRING_BYTES = 128 * 1024;

const ARGS_VARIABLE = "AGENTWIRE_ARGS";

/** `ARG_` + the name upper-cased, every character other than A–Z, 0–9 and _ turned into _. */
export function argumentVariableName(key: string): string {
  return `ARG_${key.toUpperCase().replace(/[^A-Z0-9_]/g, "_")}`;
}

/**
 * Builds the tool, or throws ToolConfigError naming it when its schema
 * cannot be used (not an object schema, not convertible, two arguments that
 * would share one variable name).
 */
export function createCustomTool(definition: CustomToolDefinition, options: CustomToolOptions): Tool {
  const { inputSchema, parameters, declared } = customToolSchemas(definition);
  // Variables the server's environment might carry under our names must not
  // feed a call that did not pass them (`${ARG_X:-default}` would see them).
  const baseEnv = Object.fromEntries(
    Object.entries(options.env).filter(([name]) => !name.startsWith("ARG_") && name !== ARGS_VARIABLE),
  );
  return {
    name: definition.name,
    description: definition.description,
    parameters,
    inputSchema,
    annotations: customToolAnnotations(definition),
    source: "custom",
    // A command line runs whatever it says: "execute" unless the configuration knows better.
    kind: definition.kind ?? "execute",
    async run(args, context) {
      const variables = argumentVariables(args, declared);
      if (!variables.ok) return { success: false, exitCode: null, output: variables.error };
      return runCommandLine(
        definition.command,
        { ...context, timeoutMs: effectiveTimeout(context.timeoutMs, definition.timeoutMs) },
        { ...options.shell, env: { ...baseEnv, ...variables.env } },
      );
    },
  };
}

/** Not read-only unless declared so; then, like the shell tool, possibly destructive unless declared otherwise. */
function customToolAnnotations(definition: CustomToolDefinition): ToolAnnotations {
  if (definition.readOnly === true) return { readOnlyHint: true, destructiveHint: false };
  return { readOnlyHint: false, destructiveHint: definition.destructive ?? true };
}

interface CustomToolSchemas {
  /** Offered to the model and listed by tools.list. */
  inputSchema: Record<string, unknown>;
  /** Checks the model's arguments (zod, converted from inputSchema). */
  parameters: z.ZodType<Record<string, unknown>>;
  /** Declared top-level property names, by their variable name. */
  declared: Map<string, string>;
}

function customToolSchemas(definition: CustomToolDefinition): CustomToolSchemas {
  const fail = (problem: string) => new ToolConfigError(`custom tool "${definition.name}": ${problem}`);
  const given = definition.parameters ?? { type: "object", properties: {} };
  const { $schema: _dropped, ...schema } = given;
  if (schema.type !== "object") {
    throw fail(`parameters must be an object schema ({"type": "object", "properties": {...}}), got type ${JSON.stringify(schema.type)}`);
  }
  // Unknown arguments are refused unless the schema allows them: a misspelt
  // argument would otherwise be dropped silently while the model believes it
  // took effect (the built-in tools are strict for the same reason).
  if (!("additionalProperties" in schema)) schema.additionalProperties = false;

  let parameters: z.ZodType;
  try {
    parameters = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    throw fail(`its parameters JSON Schema cannot be used: ${error instanceof Error ? error.message : String(error)}`);
  }

  const declared = new Map<string, string>();
  const properties = schema.properties;
  if (properties !== undefined && (typeof properties !== "object" || properties === null || Array.isArray(properties))) {
    throw fail("parameters.properties must be an object");
  }
  for (const key of Object.keys(properties ?? {})) {
    const variable = argumentVariableName(key);
    const other = declared.get(variable);
    if (other !== undefined) {
      throw fail(`arguments "${other}" and "${key}" would both arrive as ${variable}; rename one`);
    }
    declared.set(variable, key);
  }
  if (declared.has(ARGS_VARIABLE)) throw fail(`an argument may not be named like ${ARGS_VARIABLE}`);
  return { inputSchema: schema, parameters: parameters as z.ZodType<Record<string, unknown>>, declared };
}

type ArgumentVariables = { ok: true; env: Record<string, string> } | { ok: false; error: string };

/**
 * The call's variables: ARG_<NAME> per top-level argument (strings as they
 * are, everything else as JSON) and AGENTWIRE_ARGS with all of them.
 * An undeclared argument (allowed by additionalProperties) whose variable
 * name a declared one already has is left to AGENTWIRE_ARGS.
 */
function argumentVariables(args: Record<string, unknown>, declared: Map<string, string>): ArgumentVariables {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) continue;
    const variable = argumentVariableName(key);
    const owner = declared.get(variable);
    if (owner !== undefined && owner !== key) continue;
    if (owner === undefined && variable in env) continue;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    if (text.includes("\0")) {
      return { ok: false, error: `Argument "${key}" contains a NUL character, which cannot be passed to a command; send the text without it.` };
    }
    env[variable] = text;
  }
  env[ARGS_VARIABLE] = JSON.stringify(args);
  for (const [variable, text] of Object.entries(env)) {
    const bytes = Buffer.byteLength(variable, "utf8") + 1 + Buffer.byteLength(text, "utf8");
    if (bytes > MAX_ENV_STRING_BYTES) {
      const what = variable === ARGS_VARIABLE ? "The arguments together are" : `Argument "${argumentKey(variable, args)}" is`;
      return {
        ok: false,
        error: `${what} too large to pass to a command (${bytes} bytes; an environment variable holds at most ${MAX_ENV_STRING_BYTES}).`,
      };
    }
  }
  return { ok: true, env };
}

function argumentKey(variable: string, args: Record<string, unknown>): string {
  return Object.keys(args).find((key) => argumentVariableName(key) === variable) ?? variable;
}
