/**
 * What the main thread and the socket thread (socket-thread.ts,
 * socket-thread-worker.ts) say to each other. Connections are named by the
 * id the socket thread gave them. Frames to the sockets travel in batches:
 * one message carries every frame the main thread sent in one task.
 */
import type { LogLevel } from "../logging/logger.js";
import type { WebSocketSettings } from "./websocket-server.js";

/** What the socket thread is started with (its workerData). */
export interface SocketThreadData {
  settings: WebSocketSettings & { server: WebSocketSettings["server"] & { port: number } };
  /** Raw TCP connections beyond this are dropped at once (the HTTP server's maxConnections). */
  maxTcpConnections: number;
  startedAt: number;
  webDir?: string;
}

export type FromSocketThread =
  | { t: "listening"; address: string; family: string; port: number }
  | { t: "listen-failed"; code?: string; message: string }
  | { t: "open"; id: string; address: string }
  /** A frame received on connection `id`: its text's UTF-8 bytes. */
  | { t: "frame"; id: string; data: Uint8Array }
  | { t: "closed"; id: string }
  | { t: "slow" }
  | { t: "metrics"; rid: number }
  | { t: "log"; level: Exclude<LogLevel, "silent">; message: string }
  | { t: "stopped" };

export type ToSocketThread =
  /**
   * Frames, in order: [id, frame, id, frame, …]. A frame that is the same
   * string as the one before it (an event to its next subscriber) is sent as
   * null, so it crosses the thread once.
   */
  | { t: "send"; frames: (string | null)[] }
  | { t: "close"; id: string; code: number; reason: string }
  | { t: "pause"; id: string }
  | { t: "resume"; id: string }
  /** Connections the main thread serves without the socket thread (in-memory links): the cap counts them. */
  | { t: "links"; count: number }
  | { t: "metrics"; rid: number; ok: true; text: string; contentType: string }
  | { t: "metrics"; rid: number; ok: false }
  | { t: "stop" };
