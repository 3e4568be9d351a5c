import type * as z from "zod";
import { MAX_TOOL_ARGUMENT_DEPTH } from "../../protocol/index.js";
import { frameShapeProblem } from "../rpc/frame-limits.js";
import { formatIssuePath } from "../../protocol/issue-path.js";

/** One problem with a tool call's arguments; `path` names the field, e.g. "command" or "edits[0].text" ("" for the whole value). */
export interface ArgumentIssue {
  path: string;
  message: string;
  /** zod's issue code ("invalid_type", "unrecognized_keys", …), or "invalid_json", or "too_deep" (nesting over MAX_TOOL_ARGUMENT_DEPTH). */
  code: string;
}

export type ArgumentValidation<A> = { ok: true; value: A } | { ok: false; issues: ArgumentIssue[] };

/** Checks already-decoded arguments against a tool's schema (its `parameters`). */
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

/** Decodes the JSON text a model produced for a tool call, then validates it against the tool's schema. */
export function validateArgumentsJson<A>(schema: z.ZodType<A>, text: string): ArgumentValidation<A> {
  const decoded = decodeArguments(text);
  return decoded.ok ? validateArguments(schema, decoded.value) : decoded;
}

/** One line per issue, e.g. "command: Invalid input: expected string, received number". */
export function formatArgumentIssues(issues: ArgumentIssue[]): string {
  return issues.map((issue) => `${issue.path === "" ? "arguments" : issue.path}: ${issue.message}`).join("\n");
}
