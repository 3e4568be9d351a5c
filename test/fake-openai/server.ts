/**
 * A fake OpenAI-compatible HTTP server for tests and benchmarks: plain
 * node:http, scripted answers, and request validation as strict as the real
 * API's, so a history our context builder gets wrong fails here first. It
 * speaks Chat Completions (`POST /v1/chat/completions`) and the Responses
 * API (`POST /v1/responses`), and Anthropic's Messages API (`POST
 * /v1/messages`, key in `x-api-key`), playing the same scripts on all three.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { anthropicErrorBody, playAnthropic } from "./anthropic-responder.js";
import { chatViewOfAnthropic } from "./anthropic-view.js";
import { errorBody, play, type Exchange } from "./responder.js";
import { playResponses } from "./responses-responder.js";
import { chatViewOfResponses } from "./responses-view.js";
import { DEFAULT_SCRIPT, scriptFromHeader, scriptFromModel, type FakeScript } from "./scripts.js";
import { validateChatRequest, type ValidationError } from "./validate.js";
import { validateResponsesRequest } from "./validate-responses.js";
import { validateAnthropicRequest } from "./validate-anthropic.js";

export * from "./scripts.js";
export { validateChatRequest, type ValidationError } from "./validate.js";
export { validateResponsesRequest } from "./validate-responses.js";
export { chatViewOfResponses } from "./responses-view.js";
export { ENCRYPTED_PREFIX } from "./responses-responder.js";
export { SIGNATURE_PREFIX, signatureOf } from "./anthropic-responder.js";
export { chatViewOfAnthropic } from "./anthropic-view.js";
export { validateAnthropicRequest } from "./validate-anthropic.js";

/** Which API a request came in on. */
export type FakeWire = "chat" | "responses" | "anthropic";

/**
 * A request body as received (validated or not). Chat requests carry
 * `messages`; Responses requests carry `input` (and `instructions`) instead —
 * `messagesOf(i)` reads either as chat messages.
 */
export interface FakeChatBody {
  model: string;
  messages: any[];
  input?: any;
  instructions?: string;
  tools?: any[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  [key: string]: unknown;
}

/**
 * How an exchange ended: the fake finished its answer, the client went away
 * first, the fake cut the connection on purpose (`cutAfter`), or the server
 * was closed with the exchange still open (a hang).
 */
export type FakeExchangeOutcome = "completed" | "client_closed" | "server_cut" | "server_closed";

export interface FakeExchange {
  wire: FakeWire;
  body: FakeChatBody;
  headers: IncomingHttpHeaders;
  /** The script played; null when the request was rejected. */
  script: FakeScript | null;
  /** Resolves when the connection for this exchange is done. */
  ended: Promise<FakeExchangeOutcome>;
}

export interface FakeRejection {
  wire: FakeWire;
  /** Parsed body, or the raw text when it was not JSON. */
  body: unknown;
  status: number;
  error: ValidationError;
}

export interface FakeModel {
  id: string;
  ownedBy?: string;
}

export interface FakeOpenAIOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /** When set, every request must carry `Authorization: Bearer <apiKey>` (Anthropic: that or `x-api-key: <apiKey>`) (else 401). */
  apiKey?: string;
  /** Models for GET /v1/models; null answers 404. */
  models?: Array<string | FakeModel> | null;
  /** Played when the queue is empty (default: a short text reply). */
  defaultScript?: FakeScript;
}

export interface FakeOpenAI {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  url: string;
  port: number;
  /** Scripts for the next requests, one per request, in order. */
  enqueue(...scripts: FakeScript[]): void;
  /** Every model request body received (either wire), parsed, including rejected ones. */
  requests: FakeChatBody[];
  /** Which wire each entry of `requests` came in on. */
  wires: FakeWire[];
  /**
   * The messages the model was shown by request `index` (of `requests`), as
   * chat messages whichever wire carried them (see responses-view.ts).
   */
  messagesOf(index: number): any[];
  /** Model requests answered 400/401/404 by the fake itself (not scripted errors). */
  rejected: FakeRejection[];
  /** One entry per accepted model request, in arrival order. */
  exchanges: FakeExchange[];
  /** Scripts still queued. */
  queued(): number;
  /** TCP connections accepted since the fake started (a client that keeps its connection alive opens one). */
  connectionsAccepted(): number;
  /** Empties the queue and the request records (between tests). */
  reset(): void;
  setModels(models: Array<string | FakeModel> | null): void;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (part: Buffer) => {
      size += part.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.destroy();
        return;
      }
      parts.push(part);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
}

function toModel(entry: string | FakeModel): FakeModel {
  return typeof entry === "string" ? { id: entry } : entry;
}

/** What a request showed the model, as chat messages whichever wire carried it. */
function chatView(body: FakeChatBody, wire: FakeWire): any[] {
  if (wire === "responses") return chatViewOfResponses(body);
  if (wire === "anthropic") return chatViewOfAnthropic(body);
  return Array.isArray(body.messages) ? body.messages : [];
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const queue: FakeScript[] = [];
  const requests: FakeChatBody[] = [];
  const wires: FakeWire[] = [];
  const rejected: FakeRejection[] = [];
  const exchanges: FakeExchange[] = [];
  let models: FakeModel[] | null =
    options.models === null ? null : (options.models ?? ["fake-model"]).map(toModel);
  const sockets = new Set<Socket>();
  let counter = 0;
  let shuttingDown = false;

  function reject(res: ServerResponse, body: unknown, status: number, error: ValidationError, type: string, code: string | null, wire: FakeWire = "chat") {
    rejected.push({ wire, body, status, error });
    if (wire === "anthropic") sendJson(res, status, anthropicErrorBody(status, error.message));
    else sendJson(res, status, errorBody(error.message, type, code, error.param));
  }

  function pickScript(req: IncomingMessage, body: FakeChatBody, wire: FakeWire): FakeScript {
    const header = req.headers["x-fake-script"];
    if (typeof header === "string") return scriptFromHeader(header);
    const messages = chatView(body, wire);
    return scriptFromModel(body.model, messages) ?? queue.shift() ?? options.defaultScript ?? DEFAULT_SCRIPT;
  }

  async function modelRequest(req: IncomingMessage, res: ServerResponse, wire: FakeWire): Promise<void> {
    const raw = await readBody(req);
    if (raw === null) {
      sendJson(res, 413, errorBody("Request body too large.", "invalid_request_error", null));
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      const error = { message: "We could not parse the JSON body of your request.", param: null };
      return reject(res, raw, 400, error, "invalid_request_error", null, wire);
    }
    requests.push(body as FakeChatBody);
    wires.push(wire);
    if (wire === "anthropic") {
      const problem = validateAnthropicRequest(body);
      if (problem) return reject(res, body, 400, problem, "invalid_request_error", null, wire);
    } else if (wire === "responses") {
      const problem = validateResponsesRequest(body);
      if (problem) return reject(res, body, problem.status, { message: problem.message, param: problem.param }, "invalid_request_error", null, wire);
    } else {
      const problem = validateChatRequest(body);
      if (problem) return reject(res, body, 400, problem, "invalid_request_error", null, wire);
    }
    const chatBody = body as FakeChatBody;

    let script: FakeScript;
    try {
      script = pickScript(req, chatBody, wire);
    } catch (err) {
      const error = { message: (err as Error).message, param: null };
      return reject(res, body, 400, error, "invalid_request_error", null, wire);
    }

    let closed = false;
    let cutByServer = false;
    const sleepers = new Set<() => void>();
    let resolveEnded!: (outcome: FakeExchangeOutcome) => void;
    const ended = new Promise<FakeExchangeOutcome>((resolve) => (resolveEnded = resolve));
    res.on("close", () => {
      closed = true;
      for (const wake of sleepers) wake();
      if (res.writableFinished) resolveEnded("completed");
      else if (cutByServer) resolveEnded("server_cut");
      else if (shuttingDown) resolveEnded("server_closed");
      else resolveEnded("client_closed");
    });
    exchanges.push({ wire, body: chatBody, headers: req.headers, script, ended });

    const exchange: Exchange = {
      body: chatBody,
      res,
      requestId: `fake${++counter}`,
      isClosed: () => closed || res.destroyed,
      markCut: () => (cutByServer = true),
      sleep: (ms) =>
        new Promise<void>((resolve) => {
          if (closed) return resolve();
          const wake = () => {
            clearTimeout(timer);
            sleepers.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, ms);
          sleepers.add(wake);
        }),
    };
    if (wire === "anthropic") await playAnthropic(exchange, script);
    else if (wire === "responses") await playResponses(exchange, script);
    else await play(exchange, script);
  }

  function listModels(req: IncomingMessage, res: ServerResponse): void {
    const anthropic = req.headers["anthropic-version"] !== undefined;
    if (models === null) {
      if (anthropic) return sendJson(res, 404, anthropicErrorBody(404, "Not found: this endpoint does not list models."));
      sendJson(res, 404, errorBody("Not found: this endpoint does not list models.", "invalid_request_error", "not_found"));
      return;
    }
    if (anthropic) {
      const data = models.map((m) => ({ type: "model", id: m.id, display_name: m.id, created_at: "2025-01-01T00:00:00Z" }));
      return sendJson(res, 200, JSON.stringify({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }));
    }
    const data = models.map((m) => ({ id: m.id, object: "model", created: 1700000000, owned_by: m.ownedBy ?? "fake-openai" }));
    sendJson(res, 200, JSON.stringify({ object: "list", data }));
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0].replace(/\/+$/, "");
    // The Anthropic API takes its key as x-api-key, or as a bearer token (what @anthropic-ai/sdk 1.x sends).
    const keyed = req.headers.authorization === `Bearer ${options.apiKey}` || (req.headers["anthropic-version"] !== undefined && req.headers["x-api-key"] === options.apiKey);
    if (options.apiKey !== undefined && (path === "/v1/messages" || path === "/messages") && !keyed) {
      return reject(res, null, 401, { message: "invalid x-api-key", param: null }, "authentication_error", null, "anthropic");
    }
    if (options.apiKey !== undefined && !keyed) {
      const error = { message: "Incorrect API key provided.", param: null };
      if (path.endsWith("/chat/completions")) return reject(res, null, 401, error, "invalid_request_error", "invalid_api_key");
      if (path.endsWith("/responses")) return reject(res, null, 401, error, "invalid_request_error", "invalid_api_key", "responses");
      return sendJson(res, 401, errorBody(error.message, "invalid_request_error", "invalid_api_key"));
    }
    const wire: FakeWire | null =
      req.method !== "POST"
        ? null
        : path === "/v1/chat/completions" || path === "/chat/completions"
          ? "chat"
          : path === "/v1/responses" || path === "/responses"
            ? "responses"
            : path === "/v1/messages" || path === "/messages"
              ? "anthropic"
              : null;
    if (wire) {
      modelRequest(req, res, wire).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, errorBody(`fake-openai failed: ${String(err)}`, "server_error", null));
        else res.destroy();
      });
      return;
    }
    if (req.method === "GET" && (path === "/v1/models" || path === "/models")) return listModels(req, res);
    sendJson(res, 404, errorBody(`Unknown request URL: ${req.method} ${path}.`, "invalid_request_error", "unknown_url"));
  });
  let accepted = 0;
  server.on("connection", (socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}/v1`,
    port: address.port,
    enqueue: (...scripts) => void queue.push(...scripts),
    requests,
    wires,
    messagesOf: (index) => {
      const body = requests[index];
      if (!body) throw new Error(`fake-openai received no request #${index} (it has ${requests.length})`);
      return chatView(body, wires[index]!);
    },
    rejected,
    exchanges,
    queued: () => queue.length,
    connectionsAccepted: () => accepted,
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      wires.length = 0;
      rejected.length = 0;
      exchanges.length = 0;
    },
    setModels: (list) => void (models = list === null ? null : list.map(toModel)),
    close: () =>
      new Promise<void>((resolve) => {
        shuttingDown = true;
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
