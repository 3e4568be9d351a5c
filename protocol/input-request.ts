/**
 * Questions to the user: the model's `ask_user` tool and an MCP server's
 * `elicitation/create` both become an `input_requested` event; a client
 * answers with `input.respond` (first answer wins) and every client learns
 * the ending from `input_resolved`. Open requests are listed in the
 * conversation's state (`pendingInputs`); an ask_user request is stored
 * with the conversation and offered again after a restart. The form schema
 * is MCP elicitation's restricted `requestedSchema`: a flat object of
 * string, number, integer, boolean and enum properties.
 */
import * as z from "zod";

import { MAX_ANSWER_CHARS, MAX_CHOICE_CHARS, MAX_CHOICES, MAX_FORM_FIELDS, MAX_QUESTION_CHARS } from "./limits/inputs.js";

export * from "./limits/inputs.js";

const FieldText = z.string().max(500, "must be at most 500 characters");

const FieldBase = z.object({
  title: FieldText.optional().describe("A short label for the field."),
  description: FieldText.optional().describe("What the field is for."),
});

export const FormStringField = FieldBase.extend({
  type: z.literal("string"),
  enum: z
    .array(z.string().max(MAX_CHOICE_CHARS, `must be at most ${MAX_CHOICE_CHARS} characters`))
    .min(1, "must offer at least one value")
    .max(MAX_CHOICES, `must offer at most ${MAX_CHOICES} values`)
    .optional()
    .describe("The only values allowed (an enum field: show a choice)."),
  enumNames: z.array(FieldText).max(MAX_CHOICES).optional().describe("Display names of the enum values, in the same order."),
  minLength: z.number().int().min(0).optional(),
  maxLength: z.number().int().min(0).optional(),
  format: z.enum(["email", "uri", "date", "date-time"]).optional().describe("A format the text must have."),
  default: z.string().optional(),
}).describe("A text field (or an enum field when `enum` is given).");

export const FormNumberField = FieldBase.extend({
  type: z.enum(["number", "integer"]),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  default: z.number().optional(),
}).describe("A number field; `integer` allows whole numbers only.");

export const FormBooleanField = FieldBase.extend({
  type: z.literal("boolean"),
  default: z.boolean().optional(),
}).describe("A yes/no field.");

export const FormField = z.discriminatedUnion("type", [FormStringField, FormNumberField, FormBooleanField]).describe("One field of a form.");

export const InputForm = z
  .object({
    type: z.literal("object"),
    properties: z
      .record(z.string().min(1).max(100), FormField)
      .refine((p) => Object.keys(p).length >= 1, "must have at least one field")
      .refine((p) => Object.keys(p).length <= MAX_FORM_FIELDS, `must have at most ${MAX_FORM_FIELDS} fields`)
      .describe("The fields, by name."),
    required: z.array(z.string()).max(MAX_FORM_FIELDS).optional().describe("Names of the fields an answer must fill."),
  })
  .describe(
    "A small form, as MCP elicitation's restricted requestedSchema: a flat JSON Schema object whose properties are string, number, integer, boolean or enum (string with `enum`) fields.",
  );

export const InputSource = z
  .enum(["ask_user", "mcp"])
  .describe("ask_user: the model's ask_user tool; mcp: an MCP server's elicitation request during one of its tool calls.");

/** An open question, as input_requested announced it and state.pendingInputs lists it. */
export const InputRequest = z
  .object({
    requestId: z.string().describe("Names the request in input.respond."),
    toolCallId: z.string().optional().describe("The tool call that asks (the ask_user call, or the MCP tool call whose server asks)."),
    generationId: z.string().optional().describe("The generation that asked, when one did."),
    source: InputSource,
    server: z.string().optional().describe("source mcp: the MCP server that asks."),
    question: z.string().describe("What is asked, as the model or the MCP server put it."),
    choices: z.array(z.string()).optional().describe("The answers to pick from; the answer must be one of them (or, with `multiple`, a list of them)."),
    multiple: z.boolean().optional().describe("With choices: several may be picked (the answer is a list)."),
    secret: z
      .boolean()
      .optional()
      .describe("The answer is secret (a password, a token): input it hidden. It is never stored or logged in clear; the conversation keeps \"[secret answer given]\"."),
    schema: InputForm.optional().describe("Answer with an object filling this form."),
  })
  .describe("A question waiting for the user's answer.");

export const InputOutcome = z
  .enum(["answered", "declined", "cancelled"])
  .describe("answered: an answer was given; declined: the user chose not to answer; cancelled: dismissed (by the user, an interrupt or the end of the call that asked).");

export type InputForm = z.infer<typeof InputForm>;
export type FormField = z.infer<typeof FormField>;
export type InputRequest = z.infer<typeof InputRequest>;
export type InputOutcome = z.infer<typeof InputOutcome>;
