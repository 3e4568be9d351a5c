/**
 * Wire-level helpers on top of ws: a socket that keeps every frame as the
 * exact string received (to compare bytes across subscribers), and an
 * upgrade attempt that reports the HTTP status instead of throwing.
 */
import type { IncomingHttpHeaders } from "node:http";
import { WebSocket, type ClientOptions } from "ws";

export interface FrameSocket {
  socket: WebSocket;
  /** Every text frame received, as sent by the server, in order. */
  readonly frames: string[];
  /** Send a request and resolve with the parsed response plus the frames that arrived before it. */
  request(method: string, params?: unknown): Promise<{ response: any; before: string[] }>;
  /** Frames that are notifications (have a `method`), parsed. */
  notifications(): { method: string; params: any }[];
  /** Wait until `count` frames have arrived in total. */
  waitForFrames(count: number, timeoutMs?: number): Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

let nextId = 1;

/** Open a socket, send initialize, and consume its answer and the `connected` notification. */
export async function openFrameSocket(url: string, options: ClientOptions = {}, initialize: Record<string, unknown> = {}): Promise<FrameSocket> {
  const socket = new WebSocket(url, options);
  const frames: string[] = [];
  let listeners: (() => void)[] = [];
  socket.on("message", (data) => {
    frames.push(data.toString());
    for (const l of listeners) l();
  });
  socket.on("error", () => {});
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("close", (code) => reject(new Error(`closed before open (${code})`)));
  });

  const waitUntil = (check: () => boolean, what: string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      if (check()) return resolve();
      const listener = () => {
        if (!check()) return;
        clearTimeout(timer);
        listeners = listeners.filter((l) => l !== listener);
        resolve();
      };
      const timer = setTimeout(() => {
        listeners = listeners.filter((l) => l !== listener);
        reject(new Error(`${what} did not arrive within ${timeoutMs} ms`));
      }, timeoutMs);
      listeners.push(listener);
    });

  const fs: FrameSocket = {
    socket,
    frames,
    closed,
    async request(method, params = {}) {
      const id = `raw-${nextId++}`;
      const start = frames.length;
      socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      let index = -1;
      await waitUntil(
        () => {
          for (let i = start; i < frames.length; i++) {
            if ((JSON.parse(frames[i]!) as { id?: unknown }).id === id) {
              index = i;
              return true;
            }
          }
          return false;
        },
        `response to ${method}`,
        3000,
      );
      return { response: JSON.parse(frames[index]!), before: frames.slice(start, index) };
    },
    notifications() {
      return frames.map((f) => JSON.parse(f)).filter((m) => typeof m.method === "string");
    },
    waitForFrames(count, timeoutMs = 3000) {
      return waitUntil(() => frames.length >= count, `${count} frames`, timeoutMs);
    },
    close: () => socket.close(),
  };

  const init = await fs.request("initialize", { protocolVersion: "1.0", ...initialize });
  if (init.response.error) throw new Error(`initialize failed: ${JSON.stringify(init.response.error)}`);
  await waitUntil(() => frames.some((f) => f.includes('"method":"connected"')), "connected", 3000);
  frames.length = 0;
  return fs;
}

export interface UpgradeOutcome {
  /** 101 when the WebSocket opened, else the HTTP status of the refusal. */
  status: number;
  /** Subprotocol the server answered ("" for none). */
  protocol: string;
  /** Response headers of a refusal. */
  headers?: IncomingHttpHeaders;
  /** Body of a refusal. */
  body?: string;
}

/** Try a WebSocket upgrade; an opened socket is closed again at once. */
export function attemptUpgrade(url: string, options: ClientOptions = {}, protocols?: string[]): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, options);
    socket.on("unexpected-response", (request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, protocol: "", headers: response.headers, body });
      });
      response.on("error", reject);
    });
    socket.on("open", () => {
      const protocol = socket.protocol;
      socket.close();
      resolve({ status: 101, protocol });
    });
    socket.on("error", (error) => reject(error));
  });
}
