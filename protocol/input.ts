/**
 * The methods and events of questions to the user (see input-request.ts for
 * the question itself): `input_requested`, `input_resolved`, `input.respond`.
 */
import * as z from "zod";
import { ConversationEventBase } from "./events.js";
import { InputOutcome, InputRequest, MAX_ANSWER_CHARS, MAX_CHOICE_CHARS, MAX_CHOICES } from "./input-request.js";
import { ConversationId } from "./records.js";

export const InputRequestedNotification = ConversationEventBase.extend(InputRequest.shape).describe(
  "A question waits for the user: answer it with input.respond. It stays open until input_resolved names its requestId.",
);

export const InputResolvedNotification = ConversationEventBase.extend({
  requestId: z.string().describe("The request that ended."),
  toolCallId: z.string().optional().describe("The tool call that asked, as on input_requested."),
  outcome: InputOutcome,
}).describe("A question was answered, declined or cancelled: every client closes its card. Carries no answer (a secret one must not travel further).");

export const FormValue = z.union([z.string().max(MAX_ANSWER_CHARS), z.number(), z.boolean()]);

export const InputAnswer = z
  .union([
    z.string().max(MAX_ANSWER_CHARS, `must be at most ${MAX_ANSWER_CHARS} characters`),
    z.array(z.string().max(MAX_CHOICE_CHARS)).max(MAX_CHOICES, `must hold at most ${MAX_CHOICES} choices`),
    z.record(z.string().max(100), FormValue),
  ])
  .describe("The answer: text (a free question, or one of `choices`), a list of choices (`multiple`), or an object filling `schema`.");

export const InputRespondParams = z
  .strictObject({
    conversationId: ConversationId,
    requestId: z.string().min(1).describe("The request, as input_requested named it."),
    action: z
      .enum(["answer", "decline", "cancel"])
      .optional()
      .describe("answer (default): give `answer`; decline: refuse to answer; cancel: dismiss the question."),
    answer: InputAnswer.optional().describe("Required with action answer."),
  })
  .describe("Answer, decline or cancel an open question.");

export const InputRespondResult = z
  .object({ outcome: InputOutcome.describe("How the request ended (this answer's action).") })
  .describe("The request has ended.");

export type InputAnswer = z.infer<typeof InputAnswer>;
export type InputRespondParams = z.infer<typeof InputRespondParams>;
export type InputRespondResult = z.infer<typeof InputRespondResult>;
