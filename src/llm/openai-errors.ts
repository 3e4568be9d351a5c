/**
 * Turns whatever the openai SDK (or fetch underneath it) throws into an
 * LlmError, and decides which of those are worth another attempt.
 */
// The error classes alone (the SDK's core/error module), not its client: see wires/openai-client.ts.
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai/core/error";
import { LlmError } from "./provider.js";

/** The first `code` (ECONNREFUSED, UND_ERR_SOCKET, …) along an error's cause chain. */
export function causeCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code !== "") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function causeMessage(err: unknown): string {
  let current: unknown = err;
  let message = err instanceof Error ? err.message : String(err);
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.message) message = current.message;
    current = current.cause;
  }
  return message;
}

export function toLlmError(err: unknown, baseURL: string): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof APIConnectionTimeoutError) {
    return new LlmError(`the model endpoint at ${baseURL} did not answer in time`, "timeout");
  }
  if (err instanceof APIUserAbortError) {
    return new LlmError(`the request to the model endpoint at ${baseURL} was aborted`, "connection");
  }
  if (err instanceof APIConnectionError) {
    const code = causeCode(err);
    return new LlmError(
      `cannot reach the model endpoint at ${baseURL}: ${code ?? causeMessage(err)}`,
      "connection",
    );
  }
  if (err instanceof APIError) {
    const body = err.error as { message?: unknown } | undefined;
    const detail = typeof body?.message === "string" && body.message !== "" ? body.message : err.message;
    if (err.status === undefined) {
      // An `{"error": …}` event inside an otherwise fine stream.
      const code = typeof err.code === "string" && err.code !== "" ? err.code : undefined;
      return new LlmError(`the model endpoint reported an error mid-stream: ${detail}`, "http", undefined, undefined, code);
    }
    const code = typeof err.code === "string" && err.code !== "" ? err.code : undefined;
    return new LlmError(`the model endpoint answered ${err.status}: ${detail}`, "http", err.status, retryHeaders(err.headers), code);
  }
  if (err instanceof SyntaxError) {
    return new LlmError(`the model endpoint sent a chunk that is not valid JSON (${err.message})`, "malformed");
  }
  // fetch's body reader failing mid-stream: "terminated", "other side closed", ECONNRESET …
  const code = causeCode(err);
  return new LlmError(
    `the connection to the model endpoint broke: ${causeMessage(err)}${code ? ` (${code})` : ""}`,
    "connection",
  );
}

/** The headers of a failed response that say when to try again, by lower-case name; undefined when there are none. */
export function retryHeaders(headers: Headers | undefined): Record<string, string> | undefined {
  if (!headers || typeof headers.forEach !== "function") return undefined;
  const kept: Record<string, string> = {};
  headers.forEach((value, name) => {
    const key = name.toLowerCase();
    if (key === "retry-after" || key === "retry-after-ms" || key.startsWith("x-ratelimit-")) kept[key] = value;
  });
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** 429, 5xx and connection failures may succeed on another attempt; other 4xx, timeouts and garbage will not. */
export function isRetryable(err: LlmError): boolean {
  if (err.kind === "connection") return true;
  if (err.kind === "http" && err.status !== undefined) return err.status === 429 || err.status >= 500;
  return false;
}
