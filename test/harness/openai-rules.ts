/**
 * The model API's rules on a chat request, as the context tests check them
 * on what buildLlmContext makes (shared by the context and history-import
 * tests).
 */
import { expect } from "vitest";
import type { ChatMessage } from "../../src/llm/chat-message.js";

/**
 * The OpenAI chat completions rules the context must always satisfy: the
 * system prompt first when given, every tool_calls id answered by exactly one
 * tool message right after its assistant message (in order, before any other
 * role), no tool message anywhere else, arguments are JSON objects, and no
 * assistant message without content and without tool calls.
 */
export function assertValidForOpenAI(messages: ChatMessage[], system?: string): void {
  if (system) expect(messages[0]).toEqual({ role: "system", content: system });
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message.role === "tool") throw new Error(`orphan tool message at ${i}: ${JSON.stringify(message)}`);
    if (message.role !== "assistant") {
      expect(typeof message.content).toBe("string");
      continue;
    }
    if (message.tool_calls === undefined) {
      expect(message.content, `empty assistant message at ${i}`).toBeTruthy();
      continue;
    }
    const calls = message.tool_calls;
    expect(calls.length, `empty tool_calls at ${i}`).toBeGreaterThan(0);
    expect(new Set(calls.map((call) => call.id)).size, `duplicate ids at ${i}`).toBe(calls.length);
    calls.forEach((call, k) => {
      expect(call.type).toBe("function");
      const parsed: unknown = JSON.parse(call.function.arguments);
      expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)).toBe(true);
      const answer = messages[i + 1 + k];
      expect(answer?.role, `call ${call.id} not answered right after its message`).toBe("tool");
      expect(answer.role === "tool" && answer.tool_call_id).toBe(call.id);
      expect(answer.role === "tool" && typeof answer.content).toBe("string");
    });
    i += calls.length;
  }
}
