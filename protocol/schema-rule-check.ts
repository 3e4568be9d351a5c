/**
 * A named rule (schema-rules.ts) as a zod check: `schema.check(ruleCheck(name))`
 * reports the rule's issues as zod's custom issues, and schema-data-build.ts
 * finds the rule's name from the check (ruleOfCheck) to write it as data.
 */
import * as z from "zod";
import { SCHEMA_RULES, type SchemaRuleName } from "./schema-rules.js";

const names = new WeakMap<object, SchemaRuleName>();

export function ruleCheck<T>(name: SchemaRuleName): z.core.$ZodCheck<T> {
  const rule = SCHEMA_RULES[name] as (value: T) => ReturnType<(typeof SCHEMA_RULES)[SchemaRuleName]>;
  const check = z.superRefine<T>((value, ctx) => {
    for (const issue of rule(value)) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  });
  names.set(check, name);
  return check;
}

/** The rule a check of a schema stands for, if it is one. */
export function ruleOfCheck(check: object): SchemaRuleName | undefined {
  return names.get(check);
}
