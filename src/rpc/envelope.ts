/**
 * JSON-RPC 2.0 envelope validation, done here rather than by json-rpc-2.0:
 * that library answers `[]`, `[null]`, a batch of one, `null` and
 * non-string methods differently from the spec (see LIBRARY-NOTES). Every
 * frame is classified before anything reaches a handler.
 */
export type JsonRpcId = string | number | null;

export interface ValidRequest {
  kind: "request";
  /** undefined for a notification (no `id` member): it is never answered. */
  id: JsonRpcId | undefined;
  method: string;
  params: unknown;
}

export interface InvalidMessage {
  kind: "invalid";
  /** The id to answer with (null when it could not be read). */
  id: JsonRpcId;
  /** What is wrong, after "Invalid request: ". */
  detail: string;
}

export interface ResponseMessage {
  kind: "response";
  message: Record<string, unknown>;
}

export type Classified = ValidRequest | InvalidMessage | ResponseMessage;

export interface ErrorResponse {
  jsonrpc: "2.0";
  id: JsonRpcId;
  error: { code: number; message: string; data?: unknown };
}

export function errorResponse(id: JsonRpcId, code: number, message: string, data?: unknown): ErrorResponse {
  const error: ErrorResponse["error"] = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: "2.0", id, error };
}

function isId(value: unknown): value is JsonRpcId {
  return value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

/** Classify one member of a frame (a single message, or one element of a batch). */
export function classify(value: unknown): Classified {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { kind: "invalid", id: null, detail: "expected a JSON-RPC 2.0 request object" };
  }
  const msg = value as Record<string, unknown>;
  const hasId = Object.prototype.hasOwnProperty.call(msg, "id");
  const id = hasId && isId(msg.id) ? msg.id : null;

  if (!("method" in msg) && ("result" in msg || "error" in msg)) {
    if (msg.jsonrpc === "2.0" && hasId && isId(msg.id)) return { kind: "response", message: msg };
    return { kind: "invalid", id, detail: "malformed response object" };
  }
  if (msg.jsonrpc !== "2.0") {
    return { kind: "invalid", id, detail: '"jsonrpc" must be exactly "2.0"' };
  }
  if (typeof msg.method !== "string") {
    return { kind: "invalid", id, detail: '"method" must be a string' };
  }
  if (hasId && !isId(msg.id)) {
    return { kind: "invalid", id: null, detail: '"id" must be a string, a number or null' };
  }
  if ("params" in msg && (typeof msg.params !== "object" || msg.params === null)) {
    return { kind: "invalid", id, detail: '"params" must be an object or an array' };
  }
  return { kind: "request", id: hasId ? (msg.id as JsonRpcId) : undefined, method: msg.method, params: msg.params };
}
