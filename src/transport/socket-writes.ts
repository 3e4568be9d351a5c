/**
 * How a frame reaches a WebSocket's TCP socket, wherever the socket lives
 * (the main thread's server, or the socket thread's: socket-thread-worker.ts):
 * a bounded backlog, one write per frame under ws, and corking for the
 * frames after a turn's first.
 */
import type { Duplex } from "node:stream";
import type { RawData, WebSocket } from "ws";

/** WebSocket.OPEN (a readyState, the same in every WebSocket API): read here without loading ws (ws-load.ts). */
export const OPEN = 1;

/** What one socket's sender needs besides the socket. */
export interface SocketSendOptions {
  /** A connection whose unsent backlog passes this is terminated (limits.maxBufferedBytes). */
  maxBufferedBytes: number;
  /** Told once the socket was terminated for not reading (before the terminate's close event). */
  onSlowConsumer: () => void;
}

/**
 * The send of one socket. A turn's first frame to this connection is written
 * at once: a token's frame leaves while the token is handled, not after the
 * rest of that turn's work. What else the turn sends it (a replay, a tool's
 * output with its status events, a client watching many conversations)
 * leaves in one more write: the TCP socket under ws is corked at the second
 * frame and uncorked once the current task is done, before any I/O is
 * polled, so no frame waits for another event. Frames are written whole, so
 * the bytes are the same; only the number of syscalls changes.
 */
export function socketSender(socket: WebSocket, raw: Duplex, options: SocketSendOptions): (frame: string) => void {
  let backlog = 0;
  const writes: TurnWrites = { raw, sent: false, corked: false };
  return (frame) => {
    if (socket.readyState !== OPEN) return;
    // The backlog is what earlier turns left unsent; this turn's frames are only corked, not stuck.
    if (!writes.sent) backlog = socket.bufferedAmount;
    if (backlog > options.maxBufferedBytes) {
      // A client that stops reading must not grow our memory without bound;
      // it can reconnect and resume with afterSeq. Terminated, not closed: a
      // peer that reads nothing would never read a close frame either.
      options.onSlowConsumer();
      socket.terminate();
      return;
    }
    if (!writes.sent) sentThisTurn(writes);
    else if (!writes.corked) {
      writes.corked = true;
      raw.cork();
    }
    // The frame goes under ws, as the bytes ws.send would write (see textFrame). ws writes to the
    // same socket only for its own control frames (ping, pong, close), and straight away: with
    // perMessageDeflate off its sender never queues, so frames cannot be reordered.
    raw.write(textFrame(frame));
  };
}

/** Frames up to this size are kept for the next connection that sends the same one. */
const FRAME_CACHE_MAX_BYTES = 16 * 1024;
let lastText = "";
let lastFrame: Buffer | null = null;

/**
 * The WebSocket text frame of `text`, as a server sends it (RFC 6455 §5.2:
 * FIN and opcode 1, the payload length, no mask): the bytes ws.send writes.
 * An event goes to every subscriber as the same string, one connection
 * after the other, so the last frame is kept: the text is encoded once per
 * event, not once per subscriber, and each connection gets one write of
 * one buffer instead of ws's header and payload writes with their options.
 */
export function textFrame(text: string): Buffer {
  if (lastFrame !== null && text === lastText) return lastFrame;
  const length = Buffer.byteLength(text);
  const header = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81;
  if (header === 2) {
    frame[1] = length;
  } else if (header === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  frame.write(text, header, "utf8");
  if (length <= FRAME_CACHE_MAX_BYTES) {
    lastText = text;
    lastFrame = frame;
  } else {
    lastFrame = null;
  }
  return frame;
}

/** A connection's TCP socket: whether this turn of the event loop wrote to it, and corked it. */
interface TurnWrites {
  readonly raw: Duplex;
  sent: boolean;
  corked: boolean;
}

/**
 * Sockets written to this turn of the event loop: writtenNow[0..writtenCount).
 * One nextTick ends the turn for them all (uncorks those that were corked):
 * a token sent to hundreds of connections in one turn costs one tick, not a
 * tick (and its closure) per connection. The two lists are reused, turn
 * after turn: where each turn writes one frame (one token of one stream), a
 * new list per turn was ~180 bytes of garbage per token.
 */
let writtenNow: (TurnWrites | undefined)[] = [];
let writtenCount = 0;
/** The other list, empty: the one endTurn goes through while writes of the next turn go to writtenNow. */
let ending: (TurnWrites | undefined)[] = [];

function sentThisTurn(writes: TurnWrites): void {
  writes.sent = true;
  writtenNow[writtenCount++] = writes;
  if (writtenCount === 1) process.nextTick(endTurn);
}

function endTurn(): void {
  const written = writtenNow;
  const count = writtenCount;
  writtenNow = ending;
  writtenCount = 0;
  ending = written;
  for (let i = 0; i < count; i++) {
    const writes = written[i]!;
    written[i] = undefined; // a closed connection's socket is not kept until the slot is used again
    writes.sent = false;
    if (!writes.corked) continue;
    writes.corked = false;
    writes.raw.uncork();
  }
}

/**
 * The frame's bytes, decoded later by the dispatcher (only when its shape is
 * acceptable). Text frames are the protocol; a binary frame is read as UTF-8
 * JSON all the same.
 */
export function frameBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
