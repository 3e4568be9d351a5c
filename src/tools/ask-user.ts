/**
 * ask_user: the model asks the user a question and gets the answer as the
 * tool result. Asking is the approval, so it runs without tool.confirm; the
 * loop announces input_requested and waits for input.respond (see
 * src/sessions/input-requests.ts). A secret answer reaches the model in
 * this generation's model calls only; the stored result says
 * "[secret answer given]".
 */
import * as z from "zod";
import { InputForm, MAX_CHOICE_CHARS, MAX_CHOICES, MAX_QUESTION_CHARS, type InputRequest } from "../../protocol/index.js";
import type { InputReply, Tool } from "./tool.js";

export const ASK_USER_TOOL = "ask_user";
export const SECRET_REDACTION = "[secret answer given]";

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

export function createAskUserTool(): Tool<AskUserArguments> {
  return {
    name: ASK_USER_TOOL,
    description:
      "Ask the user a question and wait for the answer: when you need a decision, a preference or a value only they know. " +
      "Offer `choices` when the answers are known, or a `schema` form for several values; set `secret` for a password or token. " +
      "Do not ask what you can find out yourself.",
    parameters: AskUserArguments,
    annotations: { readOnlyHint: true, destructiveHint: false },
    source: "builtin",
    kind: "other",
    title: "Ask the user",
    runsWithoutAsking: true,
    describeCall: (args) => (typeof args.question === "string" ? { title: `Ask: ${args.question}` } : {}),
    async run(args, context) {
      if (!context.requestInput) return { success: false, output: "Nobody can answer questions here: decide yourself or say what you need in your answer." };
      const question: Omit<InputRequest, "requestId" | "toolCallId" | "generationId"> = {
        source: "ask_user",
        question: args.question,
        ...(args.choices ? { choices: args.choices } : {}),
        ...(args.multiple ? { multiple: true } : {}),
        ...(args.secret ? { secret: true } : {}),
        ...(args.schema ? { schema: args.schema } : {}),
      };
      // Too many open questions rejects: the call fails with that message.
      return askUserResult(await context.requestInput(question), args.secret === true);
    },
  };
}

/** The tool result of an answered, declined or cancelled question (shared with a generation resumed after a restart). */
export function askUserResult(reply: InputReply, secret: boolean): { success: boolean; output: string; modelOutput?: string } {
  if (reply.outcome === "declined") return { success: true, output: "The user declined to answer." };
  if (reply.outcome === "cancelled") return { success: false, output: "[cancelled: the question was dismissed before the user answered]" };
  const text = answerText(reply.answer);
  return secret ? { success: true, output: SECRET_REDACTION, modelOutput: text } : { success: true, output: text };
}

/** An answer as the model reads it. */
export function answerText(answer: unknown): string {
  if (typeof answer === "string") return answer;
  if (Array.isArray(answer)) return answer.join("\n");
  return JSON.stringify(answer);
}
