/**
 * agentwire's questions to the user (ask_user, an MCP server's elicitation:
 * `input_requested`) as ACP form elicitations (`elicitation/create`), and the
 * editor's answer back as input.respond. Pure functions: the session sends.
 *
 * A free question is a form of one text field `answer`; a question with
 * choices one enum field (an array of them with `multiple`); a question with
 * a form passes the form on (enumNames become titled options).
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { InputRequestedNotification, InputRespondParams } from "../../clients/typescript/index.js";

/** The field a question without a form of its own is answered in. */
export const ANSWER_FIELD = "answer";

type Form = NonNullable<InputRequestedNotification["schema"]>;
type Field = Form["properties"][string];

function property(field: Field): acp.ElicitationPropertySchema {
  const label = { ...(field.title ? { title: field.title } : {}), ...(field.description ? { description: field.description } : {}) };
  if (field.type !== "string") return { ...field, ...label } as acp.ElicitationPropertySchema;
  const { enum: values, enumNames, type: _type, title: _title, description: _description, ...rest } = field;
  if (!values) return { type: "string", ...label, ...rest };
  if (!enumNames) return { type: "string", ...label, ...rest, enum: values };
  return { type: "string", ...label, ...rest, oneOf: values.map((value, i) => ({ const: value, title: enumNames[i] ?? value })) };
}

export function elicitationOf(sessionId: string, request: InputRequestedNotification): acp.CreateElicitationRequest {
  let requestedSchema: acp.ElicitationSchema;
  if (request.schema) {
    requestedSchema = {
      type: "object",
      properties: Object.fromEntries(Object.entries(request.schema.properties).map(([name, field]) => [name, property(field)])),
      ...(request.schema.required ? { required: request.schema.required } : {}),
    };
  } else {
    const answer: acp.ElicitationPropertySchema = !request.choices
      ? { type: "string", title: "Answer" }
      : request.multiple
        ? { type: "array", title: "Answer", items: { type: "string", enum: request.choices } }
        : { type: "string", title: "Answer", enum: request.choices };
    requestedSchema = { type: "object", properties: { [ANSWER_FIELD]: answer }, required: [ANSWER_FIELD] };
  }
  return {
    mode: "form",
    sessionId,
    ...(request.toolCallId ? { toolCallId: request.toolCallId } : {}),
    message: request.question,
    requestedSchema,
  };
}

/** The editor's answer as input.respond's action and answer. */
export function respondOf(request: InputRequestedNotification, response: acp.CreateElicitationResponse): Pick<InputRespondParams, "action" | "answer"> {
  if (response.action === "decline") return { action: "decline" };
  if (response.action !== "accept") return { action: "cancel" };
  const content = (("content" in response ? response.content : undefined) ?? {}) as Record<string, string | number | boolean | string[]>;
  if (request.schema) {
    const values = Object.fromEntries(Object.entries(content).filter((entry): entry is [string, string | number | boolean] => !Array.isArray(entry[1])));
    return { action: "answer", answer: values };
  }
  const answer = content[ANSWER_FIELD];
  if (request.multiple) return { action: "answer", answer: Array.isArray(answer) ? answer : answer === undefined ? [] : [String(answer)] };
  return { action: "answer", answer: Array.isArray(answer) ? answer.join(", ") : String(answer ?? "") };
}
