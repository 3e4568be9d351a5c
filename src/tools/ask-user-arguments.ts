/**
 * The zod schema of ask_user's arguments: imported when a call's arguments
 * need zod and by `npm run gen`, which writes it as data and JSON Schema
 * (builtin-tool-schemas.ts; ask-user.ts holds it as builtinParameters).
 */
import * as z from "zod";
import { InputForm, MAX_CHOICE_CHARS, MAX_CHOICES, MAX_QUESTION_CHARS } from "../../protocol/input-request.js";

export const AskUserArguments = z
  .strictObject({
    question: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(MAX_QUESTION_CHARS, `must be at most ${MAX_QUESTION_CHARS} characters`)
      .describe("The question, in one or a few sentences."),
    choices: z
      .array(z.string().trim().min(1, "must not be empty").max(MAX_CHOICE_CHARS, `must be at most ${MAX_CHOICE_CHARS} characters`))
      .min(2, "must offer at least 2 choices")
      .max(MAX_CHOICES, `must offer at most ${MAX_CHOICES} choices`)
      .optional()
      .describe("Answers the user picks from (the answer is one of them)."),
    multiple: z.boolean().optional().describe("With choices: the user may pick several."),
    secret: z.boolean().optional().describe("The answer is a secret (password, token): it is input hidden and never stored."),
    schema: InputForm.optional().describe(
      "Instead of choices: a small form (JSON Schema object of string, number, integer, boolean or enum fields, with `required`); the answer fills it.",
    ),
  })
  .superRefine((args, ctx) => {
    if (args.multiple && !args.choices) ctx.addIssue({ code: "custom", path: ["multiple"], message: "needs choices" });
    if (args.schema && args.choices) ctx.addIssue({ code: "custom", path: ["schema"], message: "give choices or a schema, not both" });
    if (args.choices && new Set(args.choices).size !== args.choices.length) ctx.addIssue({ code: "custom", path: ["choices"], message: "must not repeat a choice" });
    for (const name of args.schema?.required ?? []) {
      if (!(name in args.schema!.properties)) ctx.addIssue({ code: "custom", path: ["schema", "required"], message: `names "${name}", which is not a field` });
    }
  });
export type AskUserArguments = z.infer<typeof AskUserArguments>;
