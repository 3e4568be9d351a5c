import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import type { ServerMetrics } from "../metrics/server-metrics.js";
import { SERVER_VERSION } from "../server-version.js";
import { requestHasToken } from "./upgrade-guard.js";
import { findWebDir, WEB_CSP, WEB_FILES } from "./web-client-files.js";

export interface HttpRouteOptions {
  startedAt: number;
  /** /metrics: the server's, or (in the socket thread) the main thread's through a message. */
  metrics: Pick<ServerMetrics, "exposition">;
  /** When set, /metrics requires it, as the WebSocket upgrade does. */
  token?: string;
  /** Where the built web client is (default: dist/web, found next to this module). */
  webDir?: string;
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

/** Plain HTTP on the WebSocket's port: health, the API description, metrics and the web client. */
export function handleHttp(request: IncomingMessage, response: ServerResponse, options: HttpRouteOptions): void {
  const { startedAt, webDir } = options;
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
      ({ text, contentType }) => send(200, text, contentType),
      () => send(500, JSON.stringify({ error: "metrics could not be collected" })),
    );
    return;
  }
  const web = WEB_FILES[path];
  if (web) {
    void serveWebFile(response, web, webDir);
    return;
  }
  send(404, JSON.stringify({ error: "not found", routes: ["/ (web client)", "/healthz", "/openrpc.json", "/metrics", "WebSocket upgrade on /"] }));
}

async function serveWebFile(response: ServerResponse, web: { file: string; type: string }, webDir: string | undefined): Promise<void> {
  const fail = (status: number, text: string) => {
    response.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
    response.end(text);
  };
  let body: Buffer;
  try {
    const dir = webDir ?? (await findWebDir());
    // Tests and development run from source, where nothing has been bundled yet.
    if (dir === undefined) return fail(503, NOT_BUILT);
    body = await readFile(join(dir, web.file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return fail(503, NOT_BUILT);
    return fail(500, `web client file ${web.file} could not be read\n`);
  }
  response.writeHead(200, {
    "content-type": web.type,
    "content-length": body.length,
    "cache-control": "no-cache",
    "content-security-policy": WEB_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  });
  response.end(body);
}

const NOT_BUILT = "web client not built: run npm run build\n";
