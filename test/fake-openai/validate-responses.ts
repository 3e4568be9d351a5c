/**
 * Checks a Responses API request body (`POST /v1/responses`) the way the
 * OpenAI API does, so that a request the real endpoint would refuse fails
 * against the fake too: unknown top-level parameters, bad item types, a
 * function call without its id or without an output, an output without its
 * call, chat-shaped tools, reasoning items that cannot be resolved.
 * Messages follow the real API's wording where we know it.
 */
import { ENCRYPTED_PREFIX } from "./responses-responder.js";
import type { ValidationError } from "./validate.js";

type Json = Record<string, unknown>;

/** A refusal with the HTTP status the real API uses for it (most are 400). */
export interface ResponsesValidationError extends ValidationError {
  status: number;
}

/**
 * Top-level parameters of `POST /responses` (openai-node 6's ResponseCreateParams), and
 * `client_metadata`, which the Codex agent sends with every request (the Codex runtime's tests).
 */
const KNOWN_PARAMETERS = new Set([
  "background", "client_metadata", "context_management", "conversation", "include", "input", "instructions", "max_output_tokens",
  "max_tool_calls", "metadata", "model", "moderation", "parallel_tool_calls", "previous_response_id", "prompt",
  "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "reasoning", "safety_identifier", "service_tier",
  "store", "stream", "stream_options", "temperature", "text", "tool_choice", "tools", "top_logprobs", "top_p",
  "truncation", "user",
]);

/** Input item types the fake understands (the real API has more, none of which we send). */
const ITEM_TYPES = ["message", "function_call", "function_call_output", "reasoning", "item_reference"];
/** Tool types besides `function` the real API takes; the Codex runtime's agent sends some of them. */
const HOSTED_TOOL_TYPES = ["custom", "namespace", "web_search", "web_search_preview", "file_search", "local_shell", "image_generation", "code_interpreter", "mcp", "tool_search"];
const INCLUDABLE = ["reasoning.encrypted_content", "message.output_text.logprobs", "message.input_image.image_url", "file_search_call.results", "web_search_call.action.sources", "code_interpreter_call.outputs", "computer_call_output.output.image_url"];
const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"];
const SUMMARIES = ["auto", "concise", "detailed"];
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const INPUT_PARTS = ["input_text", "input_image", "input_file"];
const OUTPUT_PARTS = ["output_text", "refusal"];

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(message: string, param: string | null, status = 400): ResponsesValidationError {
  return { message, param, status };
}

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");

function checkContent(role: string, content: unknown, p: string): ResponsesValidationError | null {
  if (typeof content === "string") return null;
  if (!Array.isArray(content)) return fail(`Invalid type for '${p}': expected one of a string or array of input content items.`, p);
  const allowed = role === "assistant" ? OUTPUT_PARTS : INPUT_PARTS;
  for (const [k, part] of content.entries()) {
    const q = `${p}[${k}]`;
    if (!isObject(part)) return fail(`Invalid type for '${q}': expected an object.`, q);
    if (typeof part.type !== "string" || !allowed.includes(part.type)) {
      return fail(`Invalid value: '${String(part.type)}'. Supported values are: ${list(allowed)}.`, `${q}.type`);
    }
    if ((part.type === "input_text" || part.type === "output_text") && typeof part.text !== "string") {
      return fail(`Missing required parameter: '${q}.text'.`, `${q}.text`);
    }
    if (part.type === "input_image" && typeof part.image_url !== "string" && typeof part.file_id !== "string") {
      return fail(`Missing required parameter: '${q}.image_url'.`, `${q}.image_url`);
    }
  }
  return null;
}

function checkInput(input: unknown, store: boolean): ResponsesValidationError | null {
  if (input === undefined || typeof input === "string") return null;
  if (!Array.isArray(input)) return fail("Invalid type for 'input': expected one of a string or an array of input items.", "input");
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const [i, item] of input.entries()) {
    const p = `input[${i}]`;
    if (!isObject(item)) return fail(`Invalid type for '${p}': expected an object.`, p);
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    if (typeof type !== "string" || !ITEM_TYPES.includes(type)) {
      return fail(`Invalid value: '${String(type)}'. Supported values are: ${list(ITEM_TYPES)}.`, `${p}.type`);
    }
    switch (type) {
      case "message": {
        const role = item.role;
        if (role !== "user" && role !== "assistant" && role !== "system" && role !== "developer") {
          return fail(`Invalid value: '${String(role)}'. Supported values are: 'user', 'assistant', 'system', and 'developer'.`, `${p}.role`);
        }
        const bad = checkContent(role, item.content, `${p}.content`);
        if (bad) return bad;
        break;
      }
      case "function_call":
        if (typeof item.call_id !== "string" || item.call_id === "") return fail(`Missing required parameter: '${p}.call_id'.`, `${p}.call_id`);
        if (typeof item.name !== "string" || item.name === "") return fail(`Missing required parameter: '${p}.name'.`, `${p}.name`);
        if (typeof item.arguments !== "string") return fail(`Invalid type for '${p}.arguments': expected a string.`, `${p}.arguments`);
        if (calls.has(item.call_id)) return fail(`Duplicate item found with call_id ${item.call_id}.`, `${p}.call_id`);
        calls.add(item.call_id);
        break;
      case "function_call_output":
        if (typeof item.call_id !== "string" || item.call_id === "") return fail(`Missing required parameter: '${p}.call_id'.`, `${p}.call_id`);
        if (!calls.has(item.call_id)) return fail(`No tool call found for function call output with call_id ${item.call_id}.`, "input");
        if (typeof item.output !== "string" && !Array.isArray(item.output)) {
          return fail(`Invalid type for '${p}.output': expected one of a string or an array of content items.`, `${p}.output`);
        }
        answered.add(item.call_id);
        break;
      case "reasoning": {
        if (typeof item.id !== "string") return fail(`Missing required parameter: '${p}.id'.`, `${p}.id`);
        if (!Array.isArray(item.summary)) return fail(`Missing required parameter: '${p}.summary'.`, `${p}.summary`);
        const next = input[i + 1] as Json | undefined;
        if (!isObject(next) || next.type === "reasoning") {
          return fail(`Item '${item.id}' of type 'reasoning' was provided without its required following item.`, "input");
        }
        if (item.encrypted_content === undefined || item.encrypted_content === null) {
          if (!store) {
            return fail(
              `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
              "input",
              404,
            );
          }
        } else if (typeof item.encrypted_content !== "string" || !item.encrypted_content.startsWith(ENCRYPTED_PREFIX)) {
          return fail(`The encrypted content for item ${item.id} could not be verified.`, "input");
        }
        break;
      }
    }
  }
  for (const id of calls) if (!answered.has(id)) return fail(`No tool output found for function call ${id}.`, "input");
  return null;
}

function checkTools(tools: unknown): ResponsesValidationError | null {
  if (tools === undefined) return null;
  if (!Array.isArray(tools)) return fail("Invalid type for 'tools': expected an array.", "tools");
  const names = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    const p = `tools[${i}]`;
    if (!isObject(tool)) return fail(`Invalid type for '${p}': expected an object.`, p);
    // Hosted and grouped tools (what the Codex agent sends beside its functions) are taken unchecked: agentwire sends none.
    if (typeof tool.type === "string" && HOSTED_TOOL_TYPES.includes(tool.type)) continue;
    if (tool.type !== "function") return fail(`Invalid value: '${String(tool.type)}'. Supported values are: 'function', 'file_search', 'web_search', and others.`, `${p}.type`);
    // Chat Completions' nesting ({ type, function: { name } }) is the classic mistake here.
    if (typeof tool.name !== "string") return fail(`Missing required parameter: '${p}.name'.`, `${p}.name`);
    if (!FUNCTION_NAME.test(tool.name)) {
      return fail(`Invalid '${p}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, `${p}.name`);
    }
    if (names.has(tool.name)) return fail(`Duplicate function name '${tool.name}' in tools.`, `${p}.name`);
    names.add(tool.name);
    if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters)) {
      return fail(`Invalid type for '${p}.parameters': expected an object.`, `${p}.parameters`);
    }
    if (tool.strict !== undefined && tool.strict !== null && typeof tool.strict !== "boolean") {
      return fail(`Invalid type for '${p}.strict': expected a boolean.`, `${p}.strict`);
    }
  }
  return null;
}

function checkControls(body: Json): ResponsesValidationError | null {
  const { temperature, max_output_tokens, reasoning, include } = body;
  if (temperature !== undefined && temperature !== null && (typeof temperature !== "number" || temperature < 0 || temperature > 2)) {
    return fail(`Invalid 'temperature': expected a number between 0 and 2, but got ${JSON.stringify(temperature)}.`, "temperature");
  }
  if (max_output_tokens !== undefined && max_output_tokens !== null) {
    if (!Number.isInteger(max_output_tokens)) return fail("Invalid type for 'max_output_tokens': expected an integer.", "max_output_tokens");
    if ((max_output_tokens as number) < 16) {
      return fail(`Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${max_output_tokens} instead.`, "max_output_tokens");
    }
  }
  if (reasoning !== undefined && reasoning !== null) {
    if (!isObject(reasoning)) return fail("Invalid type for 'reasoning': expected an object.", "reasoning");
    for (const key of Object.keys(reasoning)) {
      if (key !== "effort" && key !== "summary" && key !== "generate_summary") return fail(`Unknown parameter: 'reasoning.${key}'.`, `reasoning.${key}`);
    }
    if (reasoning.effort !== undefined && reasoning.effort !== null && !EFFORTS.includes(reasoning.effort as string)) {
      return fail(`Invalid value: '${String(reasoning.effort)}'. Supported values are: ${list(EFFORTS)}.`, "reasoning.effort");
    }
    if (reasoning.summary !== undefined && reasoning.summary !== null && !SUMMARIES.includes(reasoning.summary as string)) {
      return fail(`Invalid value: '${String(reasoning.summary)}'. Supported values are: ${list(SUMMARIES)}.`, "reasoning.summary");
    }
  }
  if (include !== undefined && include !== null) {
    if (!Array.isArray(include)) return fail("Invalid type for 'include': expected an array.", "include");
    for (const [i, value] of include.entries()) {
      if (!INCLUDABLE.includes(value)) return fail(`Invalid value: '${String(value)}'. Supported values are: ${list(INCLUDABLE)}.`, `include[${i}]`);
    }
  }
  return null;
}

/** Returns the first problem with a Responses request body, or null when it is valid. */
export function validateResponsesRequest(body: unknown): ResponsesValidationError | null {
  if (!isObject(body)) return fail("The request body must be a JSON object.", null);
  for (const key of Object.keys(body)) if (!KNOWN_PARAMETERS.has(key)) return fail(`Unknown parameter: '${key}'.`, key);
  if (typeof body.model !== "string" || body.model === "") return fail("Missing required parameter: 'model'.", "model");
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== "string") {
    return fail("Invalid type for 'instructions': expected a string.", "instructions");
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") {
    return fail("Invalid type for 'stream': expected a boolean.", "stream");
  }
  // The fake plays scripts as event streams only; our wire always streams.
  if (body.stream !== true) return fail("fake-openai answers Responses requests as streams only: set 'stream': true.", "stream");
  const input = checkInput(body.input, body.store !== false);
  if (input) return input;
  return checkTools(body.tools) ?? checkControls(body);
}
