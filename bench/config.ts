/** What each mode runs: the full run, `--quick` (a minute or two) and `--smoke` (the test's, ~30–40 s). */

export type Mode = "full" | "quick" | "smoke";

export interface BenchConfig {
  mode: Mode;
  /** Server launches per scenario. */
  launches: number;
  /** Warm-up and measured turns per launch. */
  warmup: number;
  turns: number;
  /** Cold start: launches measured after one warm-up launch. */
  coldStarts: number;
  burstTokens: number;
  /**
   * Burst: more turns per launch that measure TTFT alone (a floor turn, then agentwire's, alternated), beside the
   * burst turns': a first token after an idle pause is bimodal on a 2-core host, and a median of 15 flipped.
   */
  ttftTurns: number;
  pacedTokens: number;
  pacedDelayMs: number;
  /** Measured paced turns per launch (after one short warm-up). */
  pacedTurns: number;
  fanoutConversations: number;
  fanoutSubscribers: number;
  fanoutTokens: number;
  fanoutDelayMs: number;
  /** The fan-out scenario's levels: C conversations × S subscriber connections each (ids: FANOUT_LEVEL_IDS). */
  fanoutLevels: FanoutLevel[];
  /** Measured fan-out turns per launch (after one warm-up). */
  fanoutTurns: number;
  /** Turn burst: conversations stepped together, and measured rounds per launch (after one warm-up). */
  turnBurstConversations: number;
  turnBurstRounds: number;
  /** Cluster fan-out: conversations owned by one instance and watched from another (fanoutSubscribers each). */
  clusterConversations: number;
  idleConnections: number;
  /** Conversation sizes for the storage scenario (the first is the baseline). */
  storageSizes: { id: string; records: number }[];
  /** Awaited appends per storage turn. */
  appendsPerTurn: number;
  /** Attack: stored conversations (conversation.list pages of up to 500 over them). */
  attackConversations: number;
  /** Attack: how long each phase (no attacker, each attack) is measured, ms. */
  attackPhaseMs: number;
  /** Attack: each normal client sends server.status this often, ms. */
  attackPeriodMs: number;
  /** Curves (bench/curve-rows.ts): the points of each curve; `id` names the row, `count` is what runs (smoke: stand-ins). */
  curveConversations: CurvePoint[];
  curveSubscribers: CurvePoint[];
  curveStored: CurvePoint[];
  /** Paced turns of the conversation and subscriber curves. */
  curveTokens: number;
  curveDelayMs: number;
  /** Measured turns per point and launch (after one warm-up). */
  curveTurns: number;
  /**
   * A fresh server for each point of the conversation and subscriber curves
   * (so RSS and CPU are the point's own); the smoke run shares one per
   * launch, as server starts from source are most of its time.
   */
  curveFreshServers: boolean;
  /** Records of the long conversation of curve-stored. */
  curveLongRecords: number;
  /** Events generated before the replay is measured: the server's replay log holds this many (--event-log-size). */
  curveReplayEvents: number;
}

export interface FanoutLevel {
  id: (typeof FANOUT_LEVEL_IDS)[number];
  conversations: number;
  subscribers: number;
}

/** The fan-out levels issue 27 holds targets for; the rows keep these ids (smoke: smaller stand-ins). */
export const FANOUT_LEVEL_IDS = ["100x3", "300x1", "500x1"] as const;

export interface CurvePoint {
  id: string;
  count: number;
}

const points = (...pairs: [string, number][]): CurvePoint[] => pairs.map(([id, count]) => ({ id, count }));

const STORAGE_SIZES = [
  { id: "100", records: 100 },
  { id: "1k", records: 1_000 },
  { id: "10k", records: 10_000 },
  { id: "100k", records: 100_000 },
  // Sized at run time to leave the last segment nearly full (storage.ts, nearlyFullSize): records here is the aim.
  { id: "99k9", records: 99_900 },
];

/**
 * The smoke run's stand-ins: the same shapes (a first segment, a few full
 * segments, a last segment nearly full) at a fraction of the prefill time;
 * the rows keep their labels, the description gives the sizes.
 */
const SMOKE_STORAGE_SIZES = [
  { id: "100", records: 100 },
  { id: "1k", records: 1_000 },
  { id: "10k", records: 1_500 },
  { id: "100k", records: 2_000 },
  { id: "99k9", records: 1_900 },
];

export function configFor(mode: Mode): BenchConfig {
  const common = {
    mode,
    burstTokens: 2000,
    pacedTokens: 200,
    pacedDelayMs: 10,
    turnBurstConversations: 300,
    turnBurstRounds: 5,
    fanoutConversations: 100,
    fanoutSubscribers: 3,
    fanoutTokens: 200,
    fanoutDelayMs: 10,
    fanoutLevels: [
      { id: "100x3", conversations: 100, subscribers: 3 },
      { id: "300x1", conversations: 300, subscribers: 1 },
      { id: "500x1", conversations: 500, subscribers: 1 },
    ] as FanoutLevel[],
    clusterConversations: 30,
    idleConnections: 10_000,
    storageSizes: STORAGE_SIZES,
    appendsPerTurn: 10,
    attackConversations: 1000,
    attackPeriodMs: 20,
    warmup: 1,
    curveConversations: points(["1", 1], ["10", 10], ["100", 100], ["500", 500]),
    curveSubscribers: points(["1", 1], ["10", 10], ["100", 100]),
    curveStored: points(["1k", 1_000], ["10k", 10_000], ["100k", 100_000]),
    curveTokens: 200,
    curveDelayMs: 10,
    curveLongRecords: 100_000,
    curveReplayEvents: 4096,
    curveFreshServers: true,
  };
  if (mode === "full") return { ...common, launches: 3, turns: 5, ttftTurns: 25, pacedTurns: 5, coldStarts: 10, fanoutTurns: 3, attackPhaseMs: 5000, curveTurns: 2 };
  if (mode === "quick") {
    return {
      ...common,
      launches: 1,
      turns: 2,
      ttftTurns: 10,
      pacedTurns: 1,
      coldStarts: 3,
      fanoutTurns: 1,
      attackPhaseMs: 2000,
      curveTurns: 1,
      // 100k conversations take ~45 s to prefill and as long to remove: the quick run stands in 30k.
      curveStored: points(["1k", 1_000], ["10k", 10_000], ["100k", 30_000]),
    };
  }
  return {
    ...common,
    launches: 1,
    turns: 1,
    ttftTurns: 1,
    pacedTurns: 1,
    coldStarts: 1,
    pacedTokens: 40,
    fanoutConversations: 10,
    turnBurstConversations: 10,
    turnBurstRounds: 1,
    clusterConversations: 4,
    fanoutTokens: 40,
    fanoutTurns: 1,
    fanoutLevels: [
      { id: "100x3", conversations: 10, subscribers: 3 },
      { id: "300x1", conversations: 3, subscribers: 1 },
      { id: "500x1", conversations: 4, subscribers: 1 },
    ],
    idleConnections: 200,
    storageSizes: SMOKE_STORAGE_SIZES,
    appendsPerTurn: 3,
    attackConversations: 50,
    attackPhaseMs: 500,
    // Stand-ins, as for storage: the rows keep their labels, the notes give the sizes.
    curveConversations: points(["1", 1], ["10", 2], ["100", 3], ["500", 4]),
    curveSubscribers: points(["1", 1], ["10", 2], ["100", 3]),
    curveStored: points(["1k", 10], ["10k", 20], ["100k", 40]),
    curveTokens: 20,
    // 1 ms apart: the smoke run checks the path, and a paced 10 ms turn would be most of its time.
    curveDelayMs: 1,
    curveTurns: 1,
    curveLongRecords: 1_500,
    curveReplayEvents: 50,
    curveFreshServers: false,
  };
}
