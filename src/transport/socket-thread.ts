/**
 * The main thread's side of the socket thread (server.socketThread; the
 * thread itself is socket-thread-worker.ts). Each connection the thread
 * opens gets a Link here whose frames are gathered while the current task
 * runs and posted in one message when it ends (a microtask): a token sent to
 * many subscribers crosses the thread once, and no frame waits for another
 * event. A close or a pause goes after the frames sent before it.
 */
import { Worker } from "node:worker_threads";
import type { Logger } from "../logging/logger.js";
import type { ServerMetrics } from "../metrics/server-metrics.js";
import { workerScript } from "../tools/offload/worker-script.js";
import type { Link } from "./link.js";
import type { LinkSession } from "./link-session.js";
import type { FromSocketThread, SocketThreadData, ToSocketThread } from "./socket-thread-messages.js";

export interface SocketThreadOptions {
  data: SocketThreadData;
  log: Logger;
  metrics: Pick<ServerMetrics, "exposition" | "slowConsumerDropped">;
  /** Serves one connection's link (a session, counted in the server's connections). */
  open(link: Link, id: string): Pick<LinkSession, "receive" | "closed">;
}

export interface SocketThread {
  readonly address: { address: string; family: string; port: number };
  /** Connections served without the thread changed (in-memory links): the thread's cap counts them. */
  otherLinks(count: number): void;
  /** Closes every socket (1001), then the listening socket, then the thread. */
  close(): Promise<void>;
}

export async function startSocketThread(options: SocketThreadOptions): Promise<SocketThread> {
  const { log } = options;
  const { script, eval: isCode } = workerScript("socket-thread-worker", import.meta.url);
  const worker = new Worker(script, { eval: isCode, workerData: options.data, name: "agentwire sockets", execArgv: [] });
  const sessions = new Map<string, Pick<LinkSession, "receive" | "closed">>();
  const post = (message: ToSocketThread) => worker.postMessage(message);

  // Frames of the current task, [id, frame, …], posted once it ends.
  let pending: (string | null)[] = [];
  let lastFrame: string | undefined;
  const flush = () => {
    if (pending.length === 0) return;
    const frames = pending;
    pending = [];
    lastFrame = undefined;
    post({ t: "send", frames });
  };
  const linkFor = (id: string, address: string): Link => ({
    remoteAddress: address,
    send(frame) {
      if (pending.length === 0) queueMicrotask(flush);
      pending.push(id, frame === lastFrame ? null : frame);
      lastFrame = frame;
    },
    close(code, reason) {
      flush();
      post({ t: "close", id, code, reason });
    },
    pause() {
      flush();
      post({ t: "pause", id });
    },
    resume() {
      flush();
      post({ t: "resume", id });
    },
  });

  let stopped: (() => void) | undefined;
  let exited = false;
  const listening = new Promise<SocketThread["address"]>((resolve, reject) => {
    worker.on("message", (message: FromSocketThread) => {
      switch (message.t) {
        case "frame": {
          const bytes = message.data;
          sessions.get(message.id)?.receive(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
          return;
        }
        case "open":
          sessions.set(message.id, options.open(linkFor(message.id, message.address), message.id));
          return;
        case "closed": {
          const session = sessions.get(message.id);
          sessions.delete(message.id);
          session?.closed();
          return;
        }
        case "slow":
          options.metrics.slowConsumerDropped();
          return;
        case "metrics":
          options.metrics.exposition().then(
            ({ text, contentType }) => post({ t: "metrics", rid: message.rid, ok: true, text, contentType }),
            () => post({ t: "metrics", rid: message.rid, ok: false }),
          );
          return;
        case "log":
          log[message.level](message.message);
          return;
        case "listening":
          resolve({ address: message.address, family: message.family, port: message.port });
          return;
        case "listen-failed":
          reject(Object.assign(new Error(message.message), { code: message.code }));
          return;
        case "stopped":
          stopped?.();
          return;
      }
    });
    worker.on("error", (error) => {
      // Its sockets and the listening socket are gone with it: nothing can connect until the server restarts.
      log.error("the socket thread failed; no client can connect to this server until it is restarted", error);
      reject(error);
    });
    worker.on("exit", (code) => {
      exited = true;
      // Its connections are gone with it.
      for (const [id, session] of sessions) {
        sessions.delete(id);
        session.closed();
      }
      stopped?.();
      reject(new Error(`the socket thread exited (${code}) before listening`));
    });
  });
  let address: SocketThread["address"];
  try {
    address = await listening;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    address,
    otherLinks: (count) => post({ t: "links", count }),
    close: () =>
      (closing ??= (async () => {
        if (exited) return;
        flush();
        await new Promise<void>((resolve) => {
          stopped = resolve;
          post({ t: "stop" });
        });
        await worker.terminate();
      })()),
  };
}
