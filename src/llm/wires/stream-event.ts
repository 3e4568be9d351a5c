import { LlmError } from "../provider.js";

/**
 * One streamed event's JSON, as every wire reads it: text that is not JSON
 * is the endpoint's fault (`malformed`), named as a chunk or an event after
 * the wire's own word for it.
 */
export function parseStreamEvent<T>(data: string, what: "chunk" | "event"): T {
  try {
    return JSON.parse(data) as T;
  } catch (error) {
    throw new LlmError(`the model endpoint sent ${what === "chunk" ? "a chunk" : "an event"} that is not valid JSON (${(error as Error).message})`, "malformed");
  }
}
