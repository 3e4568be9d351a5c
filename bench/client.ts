/**
 * The driver's side of agentwire: the generated client over `ws`, plus the
 * one turn every streaming scenario runs (step → progress tokens → final).
 */
import { WebSocket } from "ws";
import { AgentwireClient } from "../clients/typescript/index.js";
import { parseStamps } from "../test/fake-openai/scripts.js";

export { AgentwireClient };

export const USER_TEXT = "Benchmark turn: answer with the tokens you are given.";

/** Counts WebSocket frames received by every socket built from it. */
export interface FrameCounter {
  frames: number;
}

/**
 * hrtime (ns) at which the driver's last WebSocket frame arrived (ws's 'message' event, before anything
 * parses it). The generated client parses a frame and calls its handlers synchronously in that same
 * event, so a handler reads its own frame's arrival here. Every latency the driver takes of agentwire is
 * taken at the frame's arrival, where the floors (bench/floor.ts: the fake's SSE chunk, the relay's
 * frame) take theirs; what the generated client then spends on the frame (its JSON.parse and dispatch)
 * is the driver's, measured apart (TurnSeen.dispatch).
 */
let frameArrivedNs = 0n;

function stampingWebSocket(counter?: FrameCounter) {
  return class StampingWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      // Registered before the client's own listener (added after construction), so it runs first.
      this.on("message", () => {
        frameArrivedNs = process.hrtime.bigint();
        if (counter) counter.frames++;
      });
    }
  };
}

export function connect(url: string, counter?: FrameCounter): Promise<AgentwireClient> {
  return AgentwireClient.connect(url, {
    WebSocket: stampingWebSocket(counter) as never,
    clientInfo: { name: "agentwire-bench" },
    requestTimeoutMs: 60_000,
  });
}

/** A fresh conversation holding one user message, subscribed on every given client. */
export async function newConversation(owner: AgentwireClient, subscribers: AgentwireClient[] = [owner]): Promise<string> {
  const conversation = await owner.conversation.create({ title: "bench" });
  for (const client of subscribers) await client.conversation.subscribe({ conversationId: conversation.id });
  await owner.message.append({ conversationId: conversation.id, role: "user", content: USER_TEXT });
  return conversation.id;
}

/** What one client saw of one generation. */
export interface TurnSeen {
  /** hrtime (ns) of the first and last generation_progress frame. */
  firstNs: bigint | undefined;
  lastNs: bigint | undefined;
  /** Stamped tokens received. */
  tokens: number;
  /** Stamped tokens in the first generation_progress frame. */
  firstFrameTokens: number;
  /** generation_progress notifications received. */
  progress: number;
  /** Per token: the frame's arrival − stamp, ms. */
  latencies: number[];
  /** Per generation_progress frame, when asked for (watchGeneration): its arrival → the generated client's handler, ms (the driver's own parse and dispatch). */
  dispatch: number[];
  /** hrtime (ns) of the final generation_complete. */
  doneNs: bigint | undefined;
}

/** A turn with nothing seen yet. */
export function emptyTurn(): TurnSeen {
  return { firstNs: undefined, lastNs: undefined, tokens: 0, firstFrameTokens: 0, progress: 0, latencies: [], dispatch: [], doneNs: undefined };
}

/**
 * Watches one conversation on one client until its generation ends
 * (generation_complete with final: true). Rejects on `error`/`interrupted`
 * or after `timeoutMs`. `timeDispatch` fills `seen.dispatch` (one more clock
 * read per frame: the one-stream scenarios take it; fan-out's hundreds of
 * watches leave it out, as the relay's side of the driver has no such work).
 */
export function watchGeneration(
  client: AgentwireClient,
  conversationId: string,
  timeoutMs: number,
  onProgress?: (nowNs: bigint) => void,
  timeDispatch = false,
): { seen: TurnSeen; done: Promise<TurnSeen> } {
  const seen = emptyTurn();
  const disposers: Array<() => void> = [];
  const done = new Promise<TurnSeen>((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      for (const dispose of disposers) dispose();
      if (error) reject(error);
      else resolve(seen);
    };
    const timer = setTimeout(() => finish(new Error(`generation in ${conversationId} did not finish within ${timeoutMs} ms`)), timeoutMs);
    disposers.push(
      client.on("generation_progress", (n) => {
        const now = frameArrivedNs;
        if (n.conversationId !== conversationId) return;
        if (timeDispatch) seen.dispatch.push(Number(process.hrtime.bigint() - now) / 1e6);
        seen.firstNs ??= now;
        seen.lastNs = now;
        seen.progress++;
        for (const stamp of parseStamps(n.delta)) {
          seen.tokens++;
          seen.latencies.push(Number(now - stamp) / 1e6);
        }
        if (seen.progress === 1) seen.firstFrameTokens = seen.tokens;
        onProgress?.(now);
      }),
      client.on("generation_complete", (n) => {
        if (n.conversationId !== conversationId || !n.final) return;
        seen.doneNs = frameArrivedNs;
        finish();
      }),
      client.on("error", (n) => {
        if (n.conversationId === conversationId) finish(new Error(`generation failed: ${n.message} (code ${n.code})`));
      }),
      client.on("interrupted", (n) => {
        if (n.conversationId === conversationId) finish(new Error("generation was interrupted"));
      }),
      client.onClose((info) => finish(new Error(`connection closed (${info.code} ${info.reason})`))),
    );
  });
  return { seen, done };
}

export interface AgentTurn extends TurnSeen {
  sentNs: bigint;
}

/** step with `model` on a prepared conversation, watched by the same client. */
export async function agentTurn(client: AgentwireClient, conversationId: string, model: string, timeoutMs = 60_000): Promise<AgentTurn> {
  const watch = watchGeneration(client, conversationId, timeoutMs, undefined, true);
  const sentNs = process.hrtime.bigint();
  await client.step({ conversationId, model });
  const seen = await watch.done;
  return { ...seen, sentNs };
}

/** Resolves with the params of the next `method` notification of a conversation. */
export function nextNotification<M extends "tool_pending" | "tool_executing" | "tool_completed" | "tool_failed">(
  client: AgentwireClient,
  method: M,
  conversationId: string,
  timeoutMs: number,
): Promise<{ atNs: bigint; params: any }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      dispose();
      reject(new Error(`no ${method} in ${conversationId} within ${timeoutMs} ms`));
    }, timeoutMs);
    const dispose = client.on(method, (n: any) => {
      const atNs = frameArrivedNs;
      if (n.conversationId !== conversationId) return;
      clearTimeout(timer);
      dispose();
      resolve({ atNs, params: n });
    });
  });
}

/** Connect `count` clients, `concurrency` handshakes at a time. */
export async function connectMany(url: string, count: number, concurrency: number): Promise<AgentwireClient[]> {
  const clients: AgentwireClient[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      clients.push(await connect(url));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return clients;
}

export async function closeAll(clients: AgentwireClient[]): Promise<void> {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
}
