/**
 * The zod check of a tool declared in JSON Schema (an MCP server's, a
 * client's), with zod's converter: imported at such a tool's first call
 * (tool-parameters.ts jsonSchemaParameters).
 */
import * as z from "zod";

/**
 * Where zod cannot convert the schema (a `$ref` to draft-07 `definitions`, a
 * keyword it does not know) any object passes and the tool's own validation
 * is the check — better than refusing a tool that would run. Arguments are
 * checked, never rewritten: what the model sent is what the tool gets.
 */
export function jsonSchemaArguments(inputSchema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  const anyObject = z.record(z.string(), z.unknown());
  let converted: z.ZodType;
  try {
    converted = z.fromJSONSchema(inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return anyObject;
  }
  return anyObject.superRefine((value, ctx) => {
    const checked = converted.safeParse(value);
    if (!checked.success) for (const issue of checked.error.issues) ctx.addIssue({ ...issue } as z.core.$ZodRawIssue);
  });
}
