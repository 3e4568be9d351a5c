import { LlmError } from "./provider.js";

/**
 * How endpoints say a request is longer than the model's context: OpenAI's
 * code (both wires), and the words OpenAI-compatible servers use instead
 * (vLLM, llama.cpp, Ollama, LiteLLM, Anthropic's compatibility layer).
 */
const CONTEXT_LENGTH_CODES = new Set(["context_length_exceeded", "string_above_max_length"]);
const CONTEXT_LENGTH_WORDS =
  /context[ _-]?length|context window|maximum context|prompt is too long|too many tokens|exceeds the context|input is too long|reduce the length of the messages/i;

/** True when the endpoint refused the request because the conversation no longer fits the model's context. */
export function isContextLengthError(error: unknown): boolean {
  if (!(error instanceof LlmError) || error.kind !== "http") return false;
  if (error.code !== undefined && CONTEXT_LENGTH_CODES.has(error.code)) return true;
  // A 429 or 5xx is never about the request's size, whatever its words.
  if (error.status !== undefined && error.status !== 400 && error.status !== 413) return false;
  return CONTEXT_LENGTH_WORDS.test(error.message);
}
