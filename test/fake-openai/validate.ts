/**
 * Checks a chat completions request body the way the OpenAI API does, so that
 * a test against the fake fails where the real endpoint would answer 400.
 * Messages follow the wording of the real API where we know it.
 */

export interface ValidationError {
  message: string;
  /** The offending parameter, e.g. `messages.[3].tool_call_id`. */
  param: string | null;
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(message: string, param: string | null): ValidationError {
  return { message, param };
}

/** Content of a message: a string, or a non-empty array of parts. */
function checkContent(content: unknown, param: string, nullable: boolean): ValidationError | null {
  if (typeof content === "string") return null;
  if ((content === null || content === undefined) && nullable) return null;
  if (Array.isArray(content)) {
    if (content.length === 0) {
      return fail(`Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`, param);
    }
    for (const [i, part] of content.entries()) {
      if (!isObject(part) || typeof part.type !== "string") {
        return fail(`Invalid value for '${param}[${i}].type': expected a content part object with a string 'type'.`, `${param}[${i}]`);
      }
    }
    return null;
  }
  if (content === undefined) return fail(`Missing required parameter: '${param}'.`, param);
  return fail(`Invalid type for '${param}': expected one of a string or array of objects, but got ${describe(content)} instead.`, param);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function checkToolCalls(calls: unknown, param: string, seen: Set<string>): ValidationError | null {
  if (!Array.isArray(calls)) return fail(`Invalid type for '${param}': expected an array, but got ${describe(calls)} instead.`, param);
  if (calls.length === 0) {
    return fail(`Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`, param);
  }
  for (const [i, call] of calls.entries()) {
    const p = `${param}[${i}]`;
    if (!isObject(call)) return fail(`Invalid type for '${p}': expected an object, but got ${describe(call)} instead.`, p);
    if (typeof call.id !== "string" || call.id === "") return fail(`Missing required parameter: '${p}.id'.`, `${p}.id`);
    if (call.type !== "function") {
      return fail(`Invalid value for '${p}.type': expected 'function', but got ${JSON.stringify(call.type ?? null)}.`, `${p}.type`);
    }
    const fn = call.function;
    if (!isObject(fn)) return fail(`Missing required parameter: '${p}.function'.`, `${p}.function`);
    if (typeof fn.name !== "string" || fn.name === "") return fail(`Missing required parameter: '${p}.function.name'.`, `${p}.function.name`);
    if (typeof fn.arguments !== "string") {
      return fail(`Invalid type for '${p}.function.arguments': expected a string, but got ${describe(fn.arguments)} instead.`, `${p}.function.arguments`);
    }
    if (seen.has(call.id)) return fail(`Duplicate value for '${p}.id': tool call id '${call.id}' is used more than once.`, `${p}.id`);
    seen.add(call.id);
  }
  return null;
}

function checkMessages(messages: unknown): ValidationError | null {
  if (messages === undefined) return fail("Missing required parameter: 'messages'.", "messages");
  if (!Array.isArray(messages)) return fail(`Invalid type for 'messages': expected an array, but got ${describe(messages)} instead.`, "messages");
  if (messages.length === 0) {
    return fail("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages");
  }
  const seenIds = new Set<string>();
  /** Ids of the latest assistant tool_calls block still waiting for their tool messages. */
  let pending: Set<string> | null = null;
  let pendingParam = "";
  const unanswered = () =>
    fail(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending!].join(", ")}`,
      pendingParam,
    );

  for (const [i, message] of messages.entries()) {
    const p = `messages.[${i}]`;
    if (!isObject(message)) return fail(`Invalid type for '${p}': expected an object, but got ${describe(message)} instead.`, p);
    const role = message.role;
    if (typeof role !== "string") return fail(`Missing required parameter: '${p}.role'.`, `${p}.role`);
    if (!ROLES.has(role)) {
      return fail(`Invalid value: '${role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`, `${p}.role`);
    }

    if (role === "tool") {
      const id = message.tool_call_id;
      if (typeof id !== "string") return fail(`Missing required parameter: '${p}.tool_call_id'.`, `${p}.tool_call_id`);
      if (!pending || !pending.has(id)) {
        return fail(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `${p}.role`,
        );
      }
      pending.delete(id);
      const bad = checkContent(message.content, `${p}.content`, false);
      if (bad) return bad;
      continue;
    }

    // Any other message closes the previous tool_calls block.
    if (pending && pending.size > 0) return unanswered();
    pending = null;

    if (role === "assistant") {
      const hasCalls = message.tool_calls !== undefined && message.tool_calls !== null;
      if (hasCalls) {
        const bad = checkToolCalls(message.tool_calls, `${p}.tool_calls`, seenIds);
        if (bad) return bad;
        pending = new Set((message.tool_calls as Array<{ id: string }>).map((c) => c.id));
        pendingParam = `${p}.tool_calls`;
      }
      const bad = checkContent(message.content, `${p}.content`, hasCalls || message.function_call !== undefined);
      if (bad) return bad;
      continue;
    }
    if (role === "function") {
      if (typeof message.name !== "string") return fail(`Missing required parameter: '${p}.name'.`, `${p}.name`);
      continue;
    }
    // system, developer, user (system is accepted anywhere, as the real API does).
    const bad = checkContent(message.content, `${p}.content`, false);
    if (bad) return bad;
  }
  if (pending && pending.size > 0) return unanswered();
  return null;
}

function checkTools(tools: unknown): ValidationError | null {
  if (tools === undefined) return null;
  if (!Array.isArray(tools)) return fail(`Invalid type for 'tools': expected an array, but got ${describe(tools)} instead.`, "tools");
  if (tools.length === 0) {
    return fail("Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.", "tools");
  }
  const names = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    const p = `tools[${i}]`;
    if (!isObject(tool)) return fail(`Invalid type for '${p}': expected an object, but got ${describe(tool)} instead.`, p);
    if (tool.type !== "function") return fail(`Invalid value for '${p}.type': expected 'function'.`, `${p}.type`);
    const fn = tool.function;
    if (!isObject(fn)) return fail(`Missing required parameter: '${p}.function'.`, `${p}.function`);
    if (typeof fn.name !== "string" || !FUNCTION_NAME.test(fn.name)) {
      return fail(`Invalid '${p}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' (at most 64 characters).`, `${p}.function.name`);
    }
    if (names.has(fn.name)) return fail(`Invalid 'tools': duplicate function name '${fn.name}'.`, `${p}.function.name`);
    names.add(fn.name);
    if (fn.description !== undefined && typeof fn.description !== "string") {
      return fail(`Invalid type for '${p}.function.description': expected a string.`, `${p}.function.description`);
    }
    if (fn.parameters !== undefined && !isObject(fn.parameters)) {
      return fail(`Invalid type for '${p}.function.parameters': expected an object (a JSON Schema).`, `${p}.function.parameters`);
    }
  }
  return null;
}

/** Returns the first problem with a chat completions request body, or null when it is valid. */
export function validateChatRequest(body: unknown): ValidationError | null {
  if (!isObject(body)) return fail("The request body must be a JSON object.", null);
  if (typeof body.model !== "string" || body.model === "") return fail("you must provide a model parameter", "model");
  const messages = checkMessages(body.messages);
  if (messages) return messages;
  const tools = checkTools(body.tools);
  if (tools) return tools;
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") {
    return fail(`Invalid type for 'stream': expected a boolean, but got ${describe(body.stream)} instead.`, "stream");
  }
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    return fail("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options");
  }
  return checkControls(body);
}

/** Generation controls, with the ranges the real API enforces. */
function checkControls(body: Json): ValidationError | null {
  const { temperature, max_tokens, reasoning_effort } = body;
  if (temperature !== undefined && temperature !== null && (typeof temperature !== "number" || temperature < 0 || temperature > 2)) {
    return fail(`Invalid 'temperature': expected a number between 0 and 2, but got ${JSON.stringify(temperature)}.`, "temperature");
  }
  if (max_tokens !== undefined && max_tokens !== null && (!Number.isInteger(max_tokens) || (max_tokens as number) < 1)) {
    return fail(`Invalid 'max_tokens': expected an integer of at least 1, but got ${JSON.stringify(max_tokens)}.`, "max_tokens");
  }
  if (body.max_completion_tokens !== undefined && max_tokens !== undefined) {
    return fail("max_tokens and max_completion_tokens cannot both be set.", "max_tokens");
  }
  const efforts = ["none", "minimal", "low", "medium", "high", "xhigh"];
  if (reasoning_effort !== undefined && reasoning_effort !== null && !efforts.includes(reasoning_effort as string)) {
    return fail(`Invalid value: ${JSON.stringify(reasoning_effort)}. Supported values are: ${efforts.map((e) => `'${e}'`).join(", ")}.`, "reasoning_effort");
  }
  return null;
}
