/**
 * What the conversation and subscriber curves share: a group of conversations
 * streaming one paced turn at once, each watched by its subscribers, and the
 * process figures around it (CPU shares, peak RSS).
 */
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { USER_TEXT, watchGeneration, type AgentwireClient, type TurnSeen } from "./client.js";
import { cpuMs, rssMiB } from "./processes.js";

export const CURVE_TURN_TIMEOUT_MS = 180_000;

export interface WatchedConversation {
  id: string;
  /** The first sends the message and the step; every one watches. */
  subscribers: AgentwireClient[];
}

/** Create one conversation per group of clients, each client of the group subscribed. */
export async function watchedConversations(groups: AgentwireClient[][]): Promise<WatchedConversation[]> {
  return Promise.all(
    groups.map(async (subscribers, i) => {
      const { id } = await subscribers[0].conversation.create({ title: `curve ${i}` });
      for (const client of subscribers) await client.conversation.subscribe({ conversationId: id });
      return { id, subscribers };
    }),
  );
}

export interface CurveTurn {
  /** Every subscriber's view of its conversation's generation. */
  seen: TurnSeen[];
  /** ms from the first step sent to the last generation_complete seen. */
  wallMs: number;
}

/** One paced turn in every conversation at once; fails unless every subscriber got `tokens` tokens. */
export async function curveTurn(conversations: WatchedConversation[], model: string, tokens: number): Promise<CurveTurn> {
  await Promise.all(conversations.map((c) => c.subscribers[0].message.append({ conversationId: c.id, role: "user", content: USER_TEXT })));
  const watches = conversations.flatMap((c) => c.subscribers.map((client) => watchGeneration(client, c.id, CURVE_TURN_TIMEOUT_MS)));
  const t0 = performance.now();
  await Promise.all(conversations.map((c) => c.subscribers[0].step({ conversationId: c.id, model })));
  const seen = await Promise.all(watches.map((w) => w.done));
  const wallMs = performance.now() - t0;
  const short = seen.find((s) => s.tokens !== tokens);
  if (short) throw new Error(`a subscriber got ${short.tokens} of ${tokens} tokens`);
  return { seen, wallMs };
}

/** Aggregate jiffies of /proc/stat: [busy, all]; busy leaves out idle and iowait. Zeros off Linux. */
function machineJiffies(): [number, number] {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const all = fields.reduce((a, b) => a + b, 0);
    return [all - fields[3] - fields[4], all];
  } catch {
    return [0, 0];
  }
}

function driverCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** CPU of the server, the fake and the driver over a stretch of wall time, and the server's peak RSS in it. */
export class UsageWindow {
  readonly #t0 = performance.now();
  readonly #server0: number;
  readonly #fake0: number;
  readonly #driver0 = driverCpuMs();
  readonly #machine0 = machineJiffies();
  readonly #sampler: NodeJS.Timeout;
  peakRssMiB: number;

  constructor(
    private readonly serverPid: number,
    private readonly fakePid: number,
  ) {
    this.#server0 = cpuMs(serverPid);
    this.#fake0 = cpuMs(fakePid);
    this.peakRssMiB = rssMiB(serverPid);
    // RSS moves with the load; sampled, so the peak is a lower bound (VmHWM would include the start-up).
    this.#sampler = setInterval(() => {
      try {
        this.peakRssMiB = Math.max(this.peakRssMiB, rssMiB(serverPid));
      } catch {
        // the server is gone; the scenario will say why
      }
    }, 100);
  }

  /** Stop sampling; CPU figures in ms and as % of one core over the window. */
  end(): {
    wallMs: number;
    serverMs: number;
    serverPercent: number;
    fakePercent: number;
    driverPercent: number;
    /** Every process of the machine, % of one core (so up to cores × 100): shows when the box itself is the limit. */
    machinePercent: number;
    peakRssMiB: number;
  } {
    clearInterval(this.#sampler);
    this.peakRssMiB = Math.max(this.peakRssMiB, rssMiB(this.serverPid));
    const wallMs = performance.now() - this.#t0;
    const serverMs = cpuMs(this.serverPid) - this.#server0;
    const share = (ms: number) => (100 * ms) / wallMs;
    const machine = machineJiffies();
    const all = machine[1] - this.#machine0[1];
    return {
      wallMs,
      serverMs,
      serverPercent: share(serverMs),
      fakePercent: share(cpuMs(this.fakePid) - this.#fake0),
      driverPercent: share(driverCpuMs() - this.#driver0),
      machinePercent: all > 0 ? (100 * cpus().length * (machine[0] - this.#machine0[0])) / all : Number.NaN,
      peakRssMiB: this.peakRssMiB,
    };
  }
}
