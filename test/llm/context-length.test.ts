/** Which endpoint refusals mean "the conversation no longer fits" (they trigger one compaction and a retry). */
import { describe, expect, it } from "vitest";
import { isContextLengthError } from "../../src/llm/context-length.js";
import { LlmError } from "../../src/llm/provider.js";

describe("isContextLengthError", () => {
  it("knows OpenAI's code on either wire, and the words compatible servers use on a 400 or 413", () => {
    expect(isContextLengthError(new LlmError("the model endpoint answered 400: too long", "http", 400, undefined, "context_length_exceeded"))).toBe(true);
    expect(isContextLengthError(new LlmError("mid-stream: failed", "http", undefined, undefined, "context_length_exceeded"))).toBe(true);
    expect(isContextLengthError(new LlmError("the model endpoint answered 400: prompt is too long: 210000 tokens > 200000 maximum", "http", 400))).toBe(true);
    expect(isContextLengthError(new LlmError("the model endpoint answered 400: This model's maximum context length is 8192 tokens", "http", 400))).toBe(true);
    expect(isContextLengthError(new LlmError("the model endpoint answered 413: the input is too long for the context window", "http", 413))).toBe(true);
  });

  it("is not fooled by other failures", () => {
    expect(isContextLengthError(new LlmError("the model endpoint answered 400: temperature must be at most 2", "http", 400))).toBe(false);
    expect(isContextLengthError(new LlmError("the model endpoint answered 429: too many tokens per minute", "http", 429))).toBe(false);
    expect(isContextLengthError(new LlmError("cannot reach the model endpoint: maximum context", "connection"))).toBe(false);
    expect(isContextLengthError(new Error("context length"))).toBe(false);
  });
});
