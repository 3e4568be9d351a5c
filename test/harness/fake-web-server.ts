/**
 * A local HTTP server on 127.0.0.1 (or another local address) that plays web pages and search
 * backends for the web tools' tests: routes are functions, every request is
 * recorded (URL and headers), and responses that never end are ended when
 * the server closes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

export interface FakeWebServer {
  /** http://127.0.0.1:PORT (or the host it was started on) */
  url: string;
  requests: { path: string; headers: IncomingMessage["headers"] }[];
  /** Responses whose body the client stopped reading or that were aborted, by path. */
  closedEarly: string[];
  close(): Promise<void>;
}

/** `host`: the address to listen on, default 127.0.0.1 (Linux answers on all of 127.0.0.0/8). */
export async function startFakeWebServer(routes: Record<string, Route>, host = "127.0.0.1"): Promise<FakeWebServer> {
  const requests: FakeWebServer["requests"] = [];
  const closedEarly: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push({ path: url.pathname + url.search, headers: req.headers });
    res.on("close", () => {
      if (!res.writableFinished) closedEarly.push(url.pathname);
    });
    const route = routes[url.pathname];
    if (!route) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`no route ${url.pathname}`);
      return;
    }
    route(req, res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`,
    requests,
    closedEarly,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes `chunk` over and over, as fast as the client reads, until the connection closes. */
export function endlessBody(res: ServerResponse, chunk: string): void {
  const write = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once("drain", write);
  };
  write();
}
