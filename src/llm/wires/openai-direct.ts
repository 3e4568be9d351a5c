/**
 * The OpenAI wires' streaming POST sent straight over node:http, without the
 * openai SDK's per-request machinery (issue 27: building the request, its
 * Headers, the fetch Request and Response and the SDK's promise chain cost
 * about half a millisecond before every model call's first byte could leave,
 * and as much again when its answer began).
 *
 * What goes on the wire is still the SDK's: its URL and headers (auth,
 * User-Agent, X-Stainless-*, OpenAI-Organization / -Project, the provider's
 * own headers) are the SDK's, worked out once per client and reused, since
 * none of them changes between requests (its own retries are off, so the
 * retry count is always 0): without loading the SDK where that can be done
 * exactly (openai-headers.ts), else by the SDK's buildRequest (sdkRequest
 * below). What comes back fails as the SDK fails: the same error
 * classes, made the way its makeRequest makes them (a non-2xx status through
 * APIError.generate with the body's JSON or text and the response headers;
 * a connection failure as APIConnectionError or, when it reads as a timeout,
 * APIConnectionTimeoutError; an abort as APIUserAbortError), so toLlmError
 * (openai-errors.ts) maps them exactly as before: status, message, code,
 * retry-after headers. test/llm/openai-direct.test.ts holds the two paths
 * side by side.
 */
import type { IncomingMessage } from "node:http";
import type OpenAI from "openai";
// The error classes alone (the SDK's core/error module): the client is loaded only when needed (openai-client.ts).
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai/core/error";
import type { NodeHttpFetch } from "../node-http-fetch.js";
import type { SdkRequest } from "./openai-headers.js";

/** Statuses whose response has no body (fetch's Response has a null body for them). */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/** Sends one request body (its JSON); resolves with the 2xx response's unread Node body (or a bodiless Response, as fetch gives). */
export type DirectSend = (json: string, signal: AbortSignal) => Promise<IncomingMessage | Response>;

/**
 * The direct sender for one path: `request` says the SDK's URL and headers
 * (openai-headers.ts, or the SDK itself: sdkRequest), asked once, at the
 * first send or by `ready`; only the body differs between calls.
 */
export function directSender(http: NodeHttpFetch, request: () => Promise<SdkRequest>): { send: DirectSend; ready(): Promise<void> } {
  let prepared: SdkRequest | undefined;
  // One answer for every send that starts before it is known (a server's first turns often start together); asked again after a failure.
  let preparing: Promise<SdkRequest> | undefined;
  const prepare = (): Promise<SdkRequest> =>
    (preparing ??= request().then(
      (answer) => (prepared = answer),
      (error: unknown) => {
        preparing = undefined;
        throw error;
      },
    ));
  const send: DirectSend = async (json, signal) => {
    const { url, headers } = prepared ?? (await prepare());
    if (signal.aborted) throw new APIUserAbortError();
    let message: IncomingMessage;
    try {
      message = await http.post(url, headers, json, signal);
    } catch (error) {
      throw connectionError(error, signal);
    }
    const status = message.statusCode ?? 0;
    if (status >= 200 && status < 300) {
      if (!NULL_BODY_STATUS.has(status)) return message;
      message.resume();
      return new Response(null, { status });
    }
    throw await statusError(status, message);
  };
  return { send, ready: async () => void (prepared ?? (await prepare())) };
}

/** The request the SDK builds for a POST to `path` with a JSON body (its headers listed as `Headers` lists them). */
export async function sdkRequest(client: OpenAI, path: string): Promise<SdkRequest> {
  const { url, req } = await client.buildRequest({ method: "post", path, body: {} });
  const headers: Record<string, string> = {};
  new Headers(req.headers as HeadersInit).forEach((value, name) => {
    headers[name] = value;
  });
  return { url: new URL(url), headers };
}

/** As the SDK's makeRequest turns a rejected fetch into an error. */
export function connectionError(error: unknown, signal: AbortSignal): APIError {
  if (signal.aborted) return new APIUserAbortError();
  const err = error instanceof Error ? error : new Error(String(error));
  const isTimeout = err.name === "AbortError" || /timed? ?out/i.test(String(err) + ("cause" in err ? String(err.cause) : ""));
  if (isTimeout) return new APIConnectionTimeoutError();
  return new APIConnectionError({ cause: err });
}

/** As the SDK's makeRequest turns a non-2xx response into an error: its body as JSON if it parses, else as text. */
export async function statusError(status: number, message: IncomingMessage): Promise<APIError> {
  const errText = await readText(message).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
  let errJSON: unknown;
  try {
    errJSON = JSON.parse(errText);
  } catch {
    errJSON = undefined;
  }
  const errMessage = errJSON ? undefined : errText;
  return APIError.generate(status, errJSON as object | undefined, errMessage, webHeaders(message));
}

/** The body as Response.text() reads it (UTF-8, a leading byte-order mark dropped). */
function readText(message: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on("data", (chunk: Buffer) => chunks.push(chunk));
    message.on("end", () => resolve(new TextDecoder().decode(Buffer.concat(chunks))));
    message.on("error", reject);
    // Destroyed before its end without an error (an abort): nothing more will come.
    message.on("close", () => reject(new Error("aborted")));
  });
}

function webHeaders(message: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}
