import type * as z from "zod";
import { MAX_TOOL_ARGUMENT_DEPTH } from "../../protocol/index.js";
import { frameShapeProblem } from "../rpc/frame-limits.js";
import { formatIssuePath } from "../../protocol/issue-path.js";
import { fastParse, INVALID, UNKNOWN } from "../../protocol/schema-data.js";
import { isLazyParameters, type LazyParameters, type ToolParameters } from "./tool-parameters.js";

/** One problem with a tool call's arguments; `path` names the field, e.g. "command" or "edits[0].text" ("" for the whole value). */
export interface ArgumentIssue {
  path: string;
  message: string;
  /** zod's issue code ("invalid_type", "unrecognized_keys", …), or "invalid_json", or "too_deep" (nesting over MAX_TOOL_ARGUMENT_DEPTH). */
  code: string;
}

export type ArgumentValidation<A> = { ok: true; value: A } | { ok: false; issues: ArgumentIssue[] };

/**
 * Checks already-decoded arguments against a tool's parameters: as data
 * where it decides them (valid), else with the zod schema, imported on first
 * need, which words the issues.
 */
export async function checkArguments<A>(parameters: ToolParameters<A>, raw: unknown): Promise<ArgumentValidation<A>> {
  const now = argumentsNow(parameters, raw);
  // Undefined only for lazy parameters: a zod schema always answers at once.
  return now ?? validateArguments(await (parameters as LazyParameters<A>).schema(), raw);
}

/**
 * checkArguments without waiting: undefined when only the zod schema, not
 * yet imported, can say (arguments the data refuses or cannot decide).
 */
export function argumentsNow<A>(parameters: ToolParameters<A>, raw: unknown): ArgumentValidation<A> | undefined {
  if (!isLazyParameters(parameters)) return validateArguments(parameters, raw);
  if (parameters.data) {
    const fast = fastParse(parameters.data, raw);
    if (fast !== INVALID && fast !== UNKNOWN) return { ok: true, value: fast.value as A };
  }
  return undefined;
}

/** Checks already-decoded arguments against a zod schema. */
export function validateArguments<A>(schema: z.ZodType<A>, raw: unknown): ArgumentValidation<A> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    issues: parsed.error.issues.map((issue) => ({ path: formatIssuePath(issue.path), message: issue.message, code: issue.code })),
  };
}

/**
 * Decodes the JSON text a model produced for a tool call into an object.
 * Empty text counts as `{}`: some models send nothing for a call without arguments.
 *
 * Nesting is bounded before the text is parsed: JSON.parse copes with any
 * depth, but everything after it (the schema check, storing the record,
 * every notification that carries it) walks the value recursively, and
 * 100,000 levels overflowed the stack there and ended the whole generation.
 * The scan is iterative and stops at the first bracket over the limit.
 */
export function decodeArguments(text: string): ArgumentValidation<Record<string, unknown>> {
  if (text.trim() === "") return { ok: true, value: {} };
  if (frameShapeProblem(text, MAX_TOOL_ARGUMENT_DEPTH, Number.POSITIVE_INFINITY)) {
    return {
      ok: false,
      issues: [
        {
          path: "",
          message: `nested deeper than ${MAX_TOOL_ARGUMENT_DEPTH} levels of arrays and objects (the limit for tool arguments); send flatter arguments`,
          code: "too_deep",
        },
      ],
    };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, issues: [{ path: "", message: `arguments are not valid JSON: ${reason}`, code: "invalid_json" }] };
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, issues: [{ path: "", message: "arguments must be a JSON object", code: "invalid_type" }] };
  }
  return { ok: true, value: raw as Record<string, unknown> };
}

/** Decodes the JSON text a model produced for a tool call, then checks it against the tool's parameters. */
export async function checkArgumentsJson<A>(parameters: ToolParameters<A>, text: string): Promise<ArgumentValidation<A>> {
  const decoded = decodeArguments(text);
  return decoded.ok ? checkArguments(parameters, decoded.value) : decoded;
}

/** One line per issue, e.g. "command: Invalid input: expected string, received number". */
export function formatArgumentIssues(issues: ArgumentIssue[]): string {
  return issues.map((issue) => `${issue.path === "" ? "arguments" : issue.path}: ${issue.message}`).join("\n");
}
