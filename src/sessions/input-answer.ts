import type { InputAnswer, InputRequest, InputRespondParams } from "../../protocol/index.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { InputReply } from "../tools/tool.js";

/**
 * The reply input.respond gives, checked against its question: one of the
 * choices (a list of them with `multiple`), an object filling the form, or
 * text. A mismatch is -32602 naming the field.
 */
export function replyOf(request: InputRequest, params: Pick<InputRespondParams, "action" | "answer">): InputReply {
  const action = params.action ?? "answer";
  if (action === "decline") return { outcome: "declined" };
  if (action === "cancel") return { outcome: "cancelled" };
  const answer = params.answer;
  if (answer === undefined) throw RpcError.invalidParam("answer", "required with action \"answer\" (or use action \"decline\" or \"cancel\")");
  return { outcome: "answered", answer: checkedAnswer(request, answer) };
}

function checkedAnswer(request: InputRequest, answer: InputAnswer): InputAnswer {
  if (request.schema) return checkedForm(request.schema, answer);
  if (request.choices) {
    const offered = request.choices;
    const picked = request.multiple ? answer : [answer];
    if (!Array.isArray(picked) || picked.some((p) => typeof p !== "string")) {
      throw RpcError.invalidParam("answer", request.multiple ? "must be a list of the offered choices" : "must be one of the offered choices (a string)");
    }
    for (const [i, choice] of (picked as string[]).entries()) {
      if (!offered.includes(choice)) {
        throw RpcError.invalidParam(request.multiple ? `answer[${i}]` : "answer", `"${choice}" is not one of the choices: ${offered.map((c) => JSON.stringify(c)).join(", ")}`);
      }
    }
    return answer;
  }
  if (typeof answer !== "string") throw RpcError.invalidParam("answer", "must be text: the question offers no choices and no form");
  return answer;
}

function checkedForm(schema: NonNullable<InputRequest["schema"]>, answer: InputAnswer): InputAnswer {
  if (typeof answer !== "object" || Array.isArray(answer)) throw RpcError.invalidParam("answer", "must be an object filling the question's form");
  for (const name of Object.keys(answer)) {
    if (!(name in schema.properties)) throw RpcError.invalidParam(`answer.${name}`, "is not a field of the form", "unrecognized_keys");
  }
  for (const name of schema.required ?? []) {
    if (answer[name] === undefined) throw RpcError.invalidParam(`answer.${name}`, "is required", "invalid_type");
  }
  for (const [name, value] of Object.entries(answer)) {
    const field = schema.properties[name]!;
    const path = `answer.${name}`;
    if (field.type === "boolean") {
      if (typeof value !== "boolean") throw RpcError.invalidParam(path, "must be true or false", "invalid_type");
    } else if (field.type === "number" || field.type === "integer") {
      if (typeof value !== "number" || !Number.isFinite(value)) throw RpcError.invalidParam(path, "must be a number", "invalid_type");
      if (field.type === "integer" && !Number.isInteger(value)) throw RpcError.invalidParam(path, "must be a whole number", "invalid_type");
      if (field.minimum !== undefined && value < field.minimum) throw RpcError.invalidParam(path, `must be at least ${field.minimum}`, "too_small");
      if (field.maximum !== undefined && value > field.maximum) throw RpcError.invalidParam(path, `must be at most ${field.maximum}`, "too_big");
    } else if (field.type === "string") {
      if (typeof value !== "string") throw RpcError.invalidParam(path, "must be text", "invalid_type");
      if (field.enum && !field.enum.includes(value)) throw RpcError.invalidParam(path, `must be one of ${field.enum.map((c) => JSON.stringify(c)).join(", ")}`, "invalid_value");
      if (field.minLength !== undefined && value.length < field.minLength) throw RpcError.invalidParam(path, `must be at least ${field.minLength} characters`, "too_small");
      if (field.maxLength !== undefined && value.length > field.maxLength) throw RpcError.invalidParam(path, `must be at most ${field.maxLength} characters`, "too_big");
    }
  }
  return answer;
}
