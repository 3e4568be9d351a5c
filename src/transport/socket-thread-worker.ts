/**
 * The socket thread (server.socketThread): the HTTP server and every
 * WebSocket live here, so a frame's write to its TCP socket (the largest
 * part of a token's cost on the main thread once it goes to several
 * subscribers) runs beside the main thread's work instead of within it.
 * Node cannot hand a socket to another thread, so this thread owns the
 * listening socket: it checks upgrades, keeps the heartbeat and the send
 * backlog bound, serves the plain HTTP routes (/metrics through the main
 * thread), and passes each connection's frames to the main thread's
 * sessions and theirs back (socket-thread-messages.ts).
 */
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort, workerData } from "node:worker_threads";
import type { Logger } from "../logging/logger.js";
import { handleHttp } from "./http-routes.js";
import type { Link } from "./link.js";
import type { FromSocketThread, SocketThreadData, ToSocketThread } from "./socket-thread-messages.js";
import { attachWebSocket } from "./websocket-server.js";
import { loadWs } from "./ws-load.js";

const port = parentPort!;
const data = workerData as SocketThreadData;
const post = (message: FromSocketThread, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);

const logAt =
  (level: "debug" | "info" | "warn" | "error") =>
  (message: string, detail?: unknown): void =>
    post({ t: "log", level, message: detail instanceof Error ? `${message}: ${detail.message}` : message });
const log: Logger = { debug: logAt("debug"), info: logAt("info"), warn: logAt("warn"), error: logAt("error"), child: () => log };

const links = new Map<string, Link>();
let otherLinks = 0;
let nextMetrics = 0;
const metricsWaiting = new Map<number, { resolve: (value: { text: string; contentType: string }) => void; reject: (error: Error) => void }>();

const http = createHttpServer((request, response) =>
  handleHttp(request, response, {
    startedAt: data.startedAt,
    token: data.settings.server.token,
    webDir: data.webDir,
    metrics: {
      exposition: () =>
        new Promise((resolve, reject) => {
          const rid = nextMetrics++;
          metricsWaiting.set(rid, { resolve, reject });
          post({ t: "metrics", rid });
        }),
    },
  }),
);
http.on("clientError", (_error, socket) => socket.destroy());
http.maxConnections = data.maxTcpConnections;

const transport = attachWebSocket(
  http,
  data.settings,
  log,
  {
    count: () => links.size + otherLinks,
    open(link, id) {
      links.set(id, link);
      post({ t: "open", id, address: link.remoteAddress ?? "unknown" });
      return {
        receive(frame) {
          // A copy of the frame's bytes in a buffer of its own, moved (not copied again) to the main
          // thread: ws hands out slices of its receive buffers, which must not be detached.
          const source = typeof frame === "string" ? Buffer.from(frame) : frame;
          const bytes = new Uint8Array(source.length);
          bytes.set(source);
          post({ t: "frame", id, data: bytes }, [bytes.buffer]);
        },
        closed() {
          links.delete(id);
          post({ t: "closed", id });
        },
      };
    },
  },
  () => post({ t: "slow" }),
);

port.on("message", (message: ToSocketThread) => {
  switch (message.t) {
    case "send": {
      const frames = message.frames;
      let frame = "";
      for (let i = 0; i < frames.length; i += 2) {
        const text = frames[i + 1];
        if (text !== null) frame = text!;
        links.get(frames[i] as string)?.send(frame);
      }
      return;
    }
    case "close":
      links.get(message.id)?.close(message.code, message.reason);
      return;
    case "pause":
      links.get(message.id)?.pause?.();
      return;
    case "resume":
      links.get(message.id)?.resume?.();
      return;
    case "links":
      otherLinks = message.count;
      return;
    case "metrics": {
      const waiting = metricsWaiting.get(message.rid);
      metricsWaiting.delete(message.rid);
      if (message.ok) waiting?.resolve({ text: message.text, contentType: message.contentType });
      else waiting?.reject(new Error("metrics could not be collected"));
      return;
    }
    case "stop":
      void transport
        .close()
        .then(() => new Promise<void>((resolve) => http.close(() => resolve())))
        .finally(() => {
          post({ t: "stopped" });
          port.close();
        });
      return;
  }
});

// Loaded before listening, as a shared server's (server.ts): this thread exists for its sockets.
await loadWs();
http.once("error", (error: NodeJS.ErrnoException) => post({ t: "listen-failed", code: error.code, message: error.message }));
http.listen(data.settings.server.port, data.settings.server.host, () => {
  const address = http.address() as AddressInfo;
  post({ t: "listening", address: address.address, family: address.family, port: address.port });
});
