/**
 * ask_user: the model asks the user a question and gets the answer as the
 * tool result. Asking is the approval, so it runs without tool.confirm; the
 * loop announces input_requested and waits for input.respond (see
 * src/sessions/input-requests.ts). A secret answer reaches the model in
 * this generation's model calls only; the stored result says
 * "[secret answer given]".
 */
import type { InputRequest } from "../../protocol/index.js";
import type { AskUserArguments } from "./ask-user-arguments.js";
import { builtinParameters } from "./tool-parameters.js";
import type { InputReply, Tool } from "./tool.js";

export const ASK_USER_TOOL = "ask_user";
export const SECRET_REDACTION = "[secret answer given]";


export function createAskUserTool(): Tool<AskUserArguments> {
  return {
    name: ASK_USER_TOOL,
    description:
      "Ask the user a question and wait for the answer: when you need a decision, a preference or a value only they know. " +
      "Offer `choices` when the answers are known, or a `schema` form for several values; set `secret` for a password or token. " +
      "Do not ask what you can find out yourself.",
    parameters: builtinParameters("ask_user", async () => (await import("./ask-user-arguments.js")).AskUserArguments),
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
