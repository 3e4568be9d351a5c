/**
 * A `fetch` for the openai SDK built on node:http / node:https.
 *
 * Measured on this project's machine, a token stream read through the
 * built-in fetch (undici's wasm HTTP parser, web streams, a promise per
 * chunk) arrived 0.1–0.2 ms later at p50 and about 1 ms later at p99 than
 * the same stream read from node:http, and costs more CPU per token. The SDK
 * still builds every request and maps every error; only the transport
 * underneath changes. `post` is the same transport without fetch's objects,
 * for the OpenAI wires' streaming request (wires/openai-direct.ts). A streamed body can be taken as the Node stream itself
 * (`takeNodeBody`), skipping web streams; anything else (error bodies,
 * `models.list`) reads the web `Response.body` as usual.
 */
import http, { type IncomingMessage } from "node:http";
import type * as Https from "node:https";
import { createRequire } from "node:module";

/**
 * node:https is loaded by the first https: request, not with this module: it
 * loads tls with it (~3 ms of a one-shot command's start), which a local
 * endpoint over http: (Ollama, llama.cpp, a test's fake model) never needs.
 */
const requireBuiltin = createRequire(import.meta.url);

export interface NodeHttpFetch {
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /**
   * The response's Node stream, if its web body has not been read: the caller
   * then owns it (and must consume or destroy it).
   */
  takeNodeBody(response: Response): IncomingMessage | undefined;
  /**
   * One POST with exactly these headers and this body, without fetch's
   * Headers, Request and Response: resolves with the response as Node
   * parsed it, its body unread (the caller owns it); rejects as `fetch`
   * does (a connection failure; an AbortError when `signal` aborts).
   */
  post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<IncomingMessage>;
  /** Close idle keep-alive sockets. */
  close(): void;
}

interface BodySource {
  message: IncomingMessage;
  /** Set once the web body or the Node stream has been handed out. */
  claimed: boolean;
}

/** node:http or node:https, with its keep-alive agent. */
interface Transport {
  request: typeof http.request;
  agent: http.Agent;
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export function createNodeHttpFetch(): NodeHttpFetch {
  const plain: Transport = { request: http.request, agent: new http.Agent({ keepAlive: true }) };
  let secure: Transport | undefined;
  const transportOf = (url: URL): Transport | undefined => {
    if (url.protocol === "http:") return plain;
    if (url.protocol !== "https:") return undefined;
    if (!secure) {
      const https = requireBuiltin("node:https") as typeof Https;
      secure = { request: https.request, agent: new https.Agent({ keepAlive: true }) };
    }
    return secure;
  };
  const sources = new WeakMap<Response, BodySource>();

  const fetchImpl = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const transport = transportOf(url);
    if (!transport) return Promise.reject(new TypeError(`fetch: unsupported protocol ${url.protocol}`));
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== "string" && !(body instanceof Uint8Array)) {
      return Promise.reject(new TypeError("fetch: only string and byte bodies are supported"));
    }
    // As in post below: neither the body nor `init` (which holds it) is named inside a closure, or the response
    // body's stream would keep it.
    const method = init.method ?? "GET";
    const { promise: answered, resolve, reject } = settleable<Response>();
    const request = transport.request(
      url,
      {
        method,
        headers,
        agent: transport.agent,
        signal: init.signal ?? undefined,
      },
      (message) => {
        const responseHeaders = new Headers();
        for (const [key, value] of Object.entries(message.headers)) {
          if (Array.isArray(value)) for (const v of value) responseHeaders.append(key, v);
          else if (value !== undefined) responseHeaders.set(key, value);
        }
        const status = message.statusCode ?? 0;
        if (NULL_BODY_STATUS.has(status) || method === "HEAD") {
          message.resume();
          resolve(new Response(null, { status, statusText: message.statusMessage, headers: responseHeaders }));
          return;
        }
        const source: BodySource = { message, claimed: false };
        let attached = false;
        const webBody = new ReadableStream<Uint8Array>(
          {
            // Attached on the first read only, so an unread body can still be taken as the Node stream.
            pull(controller) {
              if (!attached) {
                if (source.claimed) return; // taken as the Node stream
                source.claimed = attached = true;
                message.on("data", (chunk: Buffer) => {
                  controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
                  // Backpressure: wait for the next pull.
                  if ((controller.desiredSize ?? 1) <= 0) message.pause();
                });
                message.on("end", () => controller.close());
                message.on("error", (error) => controller.error(error));
              }
              message.resume();
            },
            cancel() {
              message.destroy();
            },
          },
          { highWaterMark: 0 },
        );
        const response = new Response(webBody, { status, statusText: message.statusMessage, headers: responseHeaders });
        sources.set(response, source);
        resolve(response);
      },
    );
    request.on("error", reject);
    request.end(body ?? undefined);
    return answered;
  };

  const post = (url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<IncomingMessage> => {
    const transport = transportOf(url);
    if (!transport) return Promise.reject(new TypeError(`fetch: unsupported protocol ${url.protocol}`));
    // The body is used here only, never inside a closure: a closure that named it (a promise executor, say) would
    // keep it in a context the abort listener holds until the response ends — a request body (~12.5 KB with the
    // built-in tools) per streaming model call, a third of what a call in flight kept (heap snapshots, issue 27).
    const { promise: answered, resolve, reject } = settleable<IncomingMessage>();
    const request = transport.request(
      url,
      // An empty servername over plain HTTP: the agent would otherwise work one out of the Host header for
      // TLS's SNI on every request. The signal is watched here rather than passed as `signal`, for which
      // node:http also sets up an end-of-stream watch on each request. Both were in the profile of a model
      // call's start (issue 27).
      { method: "POST", headers, agent: transport.agent, ...(transport === plain ? { servername: "" } : {}) },
      resolve,
    );
    request.on("error", reject);
    if (signal.aborted) {
      request.destroy(abortError(signal));
      return answered;
    }
    const onAbort = () => request.destroy(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    request.once("close", () => signal.removeEventListener("abort", onAbort));
    request.end(body);
    return answered;
  };

  return {
    fetch: fetchImpl,
    post,
    takeNodeBody(response) {
      const source = sources.get(response);
      if (!source || source.claimed) return undefined;
      source.claimed = true;
      return source.message;
    },
    close() {
      plain.agent.destroy();
      secure?.agent.destroy();
    },
  };
}

/** A promise and the functions that settle it, made apart from the caller's closures (see post). */
function settleable<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What node:http destroys a request with when its `signal` aborts: an AbortError carrying the signal's reason. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error("The operation was aborted", { cause: signal.reason }), { name: "AbortError", code: "ABORT_ERR" });
}
