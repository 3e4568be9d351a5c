import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServerMetrics } from "../metrics/server-metrics.js";
import { SERVER_VERSION } from "../server-version.js";
import { requestHasToken } from "./upgrade-guard.js";

export interface HttpRouteOptions {
  startedAt: number;
  metrics: ServerMetrics;
  /** When set, /metrics requires it, as the WebSocket upgrade does. */
  token?: string;
}

let openrpcCache: Promise<string> | undefined;

/** The committed OpenRPC document (protocol/openrpc.json), found from src/ or dist/src/. */
function loadOpenRpc(): Promise<string> {
  openrpcCache ??= (async () => {
    for (const rel of ["../../protocol/openrpc.json", "../../../protocol/openrpc.json"]) {
      try {
        return await readFile(new URL(rel, import.meta.url), "utf8");
      } catch {
        // next candidate
      }
    }
    throw new Error("protocol/openrpc.json not found; run npm run gen");
  })();
  openrpcCache.catch(() => (openrpcCache = undefined));
  return openrpcCache;
}

/** Plain HTTP on the WebSocket's port: health, the API description and metrics. */
export function handleHttp(request: IncomingMessage, response: ServerResponse, options: HttpRouteOptions): void {
  const { startedAt } = options;
  const path = new URL(request.url ?? "/", "http://x").pathname;
  const send = (status: number, body: string, type = "application/json") => {
    response.writeHead(status, { "content-type": type, "cache-control": "no-store" });
    response.end(body);
  };
  if (request.method !== "GET" && request.method !== "HEAD") {
    send(405, JSON.stringify({ error: "method not allowed" }));
    return;
  }
  if (path === "/healthz") {
    send(200, JSON.stringify({ ok: true, version: SERVER_VERSION, uptime: (Date.now() - startedAt) / 1000 }));
    return;
  }
  if (path === "/openrpc.json") {
    loadOpenRpc().then(
      (doc) => send(200, doc),
      () => send(500, JSON.stringify({ error: "openrpc.json is missing from this installation" })),
    );
    return;
  }
  if (path === "/metrics") {
    // Counts of conversations, tools and clients are the server's business: same token as the socket.
    if (options.token !== undefined && !requestHasToken(request, options.token)) {
      response.setHeader("www-authenticate", "Bearer");
      send(401, JSON.stringify({ error: "a valid token is required (Authorization: Bearer, or ?token=)" }));
      return;
    }
    options.metrics.exposition().then(
      (text) => send(200, text, options.metrics.contentType),
      () => send(500, JSON.stringify({ error: "metrics could not be collected" })),
    );
    return;
  }
  send(404, JSON.stringify({ error: "not found", routes: ["/healthz", "/openrpc.json", "/metrics", "WebSocket upgrade on /"] }));
}
