/**
 * Checks an Anthropic Messages request (`POST /v1/messages`) the way the API
 * does, so a history the anthropic wire gets wrong fails here as it would
 * against the real endpoint (400 invalid_request_error): max_tokens
 * required, turns alternating from a user turn, non-empty text blocks, every
 * tool_use answered by a tool_result at the head of the next user turn (and
 * no result without its call), thinking blocks signed, a thinking budget of
 * at least 1024 below max_tokens (and the tool-calling turn then starting
 * with its thinking block), at most four cache_control breakpoints.
 */
import type { ValidationError } from "./validate.js";

type Json = Record<string, any>;

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const MEDIA_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

function fail(message: string, param: string | null = null): ValidationError {
  return { message, param };
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkBlock(block: unknown, at: string, role: string): ValidationError | null {
  if (!isObject(block)) return fail(`${at}: Input should be a valid dictionary`, at);
  switch (block.type) {
    case "text":
      if (typeof block.text !== "string" || block.text === "") return fail(`${at}: text content blocks must be non-empty`, at);
      return null;
    case "image": {
      if (role !== "user") return fail(`${at}: image blocks are only allowed in user turns`, at);
      const source = block.source;
      if (!isObject(source)) return fail(`${at}.source: Field required`, `${at}.source`);
      if (source.type === "base64") {
        if (!MEDIA_TYPES.has(source.media_type)) return fail(`${at}.source.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`, at);
        if (typeof source.data !== "string" || source.data === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(source.data)) {
          return fail(`${at}.source.data: Invalid base64 data`, at);
        }
        return null;
      }
      if (source.type === "url" && typeof source.url === "string") return null;
      return fail(`${at}.source.type: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'url'`, at);
    }
    case "thinking":
      if (role !== "assistant") return fail(`${at}: thinking blocks are only allowed in assistant turns`, at);
      if (typeof block.thinking !== "string") return fail(`${at}.thinking: Field required`, at);
      if (typeof block.signature !== "string" || block.signature === "") return fail(`${at}.signature: Field required`, at);
      return null;
    case "redacted_thinking":
      if (typeof block.data !== "string") return fail(`${at}.data: Field required`, at);
      return null;
    case "tool_use":
      if (role !== "assistant") return fail(`${at}: tool_use blocks are only allowed in assistant turns`, at);
      if (typeof block.id !== "string" || !TOOL_ID.test(block.id)) return fail(`${at}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`, at);
      if (typeof block.name !== "string" || !TOOL_NAME.test(block.name)) return fail(`${at}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`, at);
      if (!isObject(block.input)) return fail(`${at}.input: Input should be a valid dictionary`, at);
      return null;
    case "tool_result":
      if (role !== "user") return fail(`${at}: tool_result blocks are only allowed in user turns`, at);
      if (typeof block.tool_use_id !== "string") return fail(`${at}.tool_use_id: Field required`, at);
      return null;
    default:
      return fail(`${at}.type: Input tag '${String(block.type)}' found using 'type' does not match any of the expected tags`, at);
  }
}

export function validateAnthropicRequest(body: unknown): ValidationError | null {
  if (!isObject(body)) return fail("Input should be a valid dictionary");
  if (typeof body.model !== "string" || body.model === "") return fail("model: Field required", "model");
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return fail("max_tokens: Field required", "max_tokens");
  if (body.stream !== true) return fail("stream: the fake only answers streaming requests", "stream");
  if ("temperature" in body && body.thinking?.type === "enabled") return fail("temperature may only be set to 1 when thinking is enabled", "temperature");
  if (body.thinking !== undefined) {
    const thinking = body.thinking;
    if (!isObject(thinking)) return fail("thinking: Input should be a valid dictionary", "thinking");
    if (thinking.type === "enabled") {
      if (!Number.isInteger(thinking.budget_tokens) || thinking.budget_tokens < 1024) return fail("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024", "thinking");
      if (thinking.budget_tokens >= body.max_tokens) return fail("`max_tokens` must be greater than `thinking.budget_tokens`", "thinking");
    }
  }
  let breakpoints = 0;
  const system = body.system;
  if (system !== undefined && typeof system !== "string") {
    if (!Array.isArray(system)) return fail("system: Input should be a valid string or list", "system");
    for (const [i, block] of system.entries()) {
      if (!isObject(block) || block.type !== "text" || typeof block.text !== "string" || block.text === "") return fail(`system.${i}: text content blocks must be non-empty`, "system");
      if (block.cache_control) breakpoints++;
    }
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return fail("tools: Input should be a valid list", "tools");
    const names = new Set<string>();
    for (const [i, tool] of body.tools.entries()) {
      if (!isObject(tool) || typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) return fail(`tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`, "tools");
      if (names.has(tool.name)) return fail("tools: Tool names must be unique.", "tools");
      names.add(tool.name);
      if (!isObject(tool.input_schema) || tool.input_schema.type !== "object") return fail(`tools.${i}.custom.input_schema.type: Input should be 'object'`, "tools");
      if (tool.cache_control) breakpoints++;
    }
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return fail("messages: at least one message is required", "messages");
  let pending: Set<string> = new Set();
  for (const [i, message] of messages.entries()) {
    const at = `messages.${i}`;
    if (!isObject(message)) return fail(`${at}: Input should be a valid dictionary`, at);
    if (message.role !== "user" && message.role !== "assistant") return fail(`${at}.role: Input should be 'user' or 'assistant'`, at);
    if (i === 0 && message.role !== "user") return fail("messages: first message must use the \"user\" role", at);
    if (i > 0 && messages[i - 1].role === message.role) return fail("messages: roles must alternate between \"user\" and \"assistant\"", at);
    const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (!Array.isArray(content) || content.length === 0) return fail(`${at}: all messages must have non-empty content`, at);
    const results = new Set<string>();
    let pastResults = false;
    for (const [j, block] of content.entries()) {
      const problem = checkBlock(block, `${at}.content.${j}`, message.role);
      if (problem) return problem;
      if (block.cache_control) breakpoints++;
      if (block.type === "tool_result") {
        if (pastResults) return fail(`${at}: tool_result blocks must come first in the user message`, at);
        if (!pending.has(block.tool_use_id)) {
          return fail(`${at}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`, at);
        }
        results.add(block.tool_use_id);
      } else {
        pastResults = true;
      }
    }
    if (pending.size > 0) {
      const missing = [...pending].filter((id) => !results.has(id));
      if (missing.length > 0) {
        return fail(`messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`, `messages.${i - 1}`);
      }
    }
    pending = new Set(message.role === "assistant" ? content.filter((b: Json) => b.type === "tool_use").map((b: Json) => b.id as string) : []);
  }
  if (pending.size > 0) return fail(`messages.${messages.length - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${[...pending].join(", ")}.`, "messages");
  if (body.thinking?.type === "enabled") {
    // The turn that called the tools being answered must carry its thinking back, first.
    const last = messages.findLast((m: Json) => m.role === "assistant");
    const blocks: Json[] = Array.isArray(last?.content) ? last.content : [];
    if (blocks.some((b) => b.type === "tool_use") && blocks[0]?.type !== "thinking" && blocks[0]?.type !== "redacted_thinking") {
      return fail(
        "messages: Expected `thinking` or `redacted_thinking`, but found `" + String(blocks[0]?.type) + "`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.",
        "messages",
      );
    }
  }
  if (breakpoints > 4) return fail("A maximum of 4 blocks with cache_control may be provided.", "cache_control");
  return null;
}
