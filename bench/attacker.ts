/**
 * The attack scenario's attacker: its own process (so building and sending
 * big frames never delays the driver's clocks), one initialized connection
 * that sends one kind of expensive frame back to back — the next as soon as
 * an answer comes, `--window` frames outstanding — for `--ms`, then waits
 * for the outstanding answers and reports what the server answered.
 *
 *   node dist/bench/attacker.js --url ws://127.0.0.1:PORT --kind batch|nested|overbatch --ms 5000 [--window 4]
 *
 * Kinds (issue 7, item 5):
 *   batch      the largest batch allowed: 100 × conversation.list {limit: 500}
 *   nested     5,000,000 nested arrays (10 MB of [[[…]]])
 *   overbatch  a batch of 200,000 tools.list (9 MB), over maxBatch: refused whole
 *
 * Prints `attacker ready` on stdout once connected with the frame built and
 * starts at once; at the end, one line `attacker summary {json}` on stderr.
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { RawClient } from "./raw-client.js";

export type AttackKind = "batch" | "nested" | "overbatch";

export interface AttackSummary {
  kind: AttackKind;
  frameBytes: number;
  sent: number;
  answered: number;
  /** Members answered with a result (batch replies). */
  results: number;
  /** Error answers (whole-frame or per member) by code. */
  errors: Record<string, number>;
  /** ms from sending a frame to its answer: median and max. */
  answerMsMedian: number;
  answerMsMax: number;
  /** Set when the connection closed before the end. */
  closed?: string;
}

export const NESTED_DEPTH = 5_000_000;
export const OVERBATCH_MEMBERS = 200_000;
export const BATCH_MEMBERS = 100;
export const LIST_LIMIT = 500;

export function attackFrame(kind: AttackKind): Buffer {
  if (kind === "nested") return Buffer.from("[".repeat(NESTED_DEPTH) + "]".repeat(NESTED_DEPTH));
  const members: string[] = [];
  if (kind === "batch") {
    for (let i = 0; i < BATCH_MEMBERS; i++) members.push(JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "conversation.list", params: { limit: LIST_LIMIT } }));
  } else {
    for (let i = 0; i < OVERBATCH_MEMBERS; i++) members.push(JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "tools.list" }));
  }
  return Buffer.from(`[${members.join(",")}]`);
}

/** Counts results and error codes in a reply without parsing it (a batch answer can be 16 MiB). */
function tally(text: string, summary: AttackSummary): void {
  for (const match of text.matchAll(/"error":\{"code":(-?\d+)/g)) summary.errors[match[1]] = (summary.errors[match[1]] ?? 0) + 1;
  for (const _ of text.matchAll(/"result":/g)) summary.results++;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { url: { type: "string" }, kind: { type: "string" }, ms: { type: "string" }, window: { type: "string", default: "4" } },
  });
  const kind = values.kind as AttackKind;
  if (!values.url || !["batch", "nested", "overbatch"].includes(kind) || !values.ms) {
    throw new Error("usage: attacker --url URL --kind batch|nested|overbatch --ms MS [--window N]");
  }
  const durationMs = Number(values.ms);
  const window = Math.max(1, Number(values.window));
  const frame = attackFrame(kind);
  const client = await RawClient.connect(values.url, "agentwire-bench-attacker");
  const summary: AttackSummary = { kind, frameBytes: frame.length, sent: 0, answered: 0, results: 0, errors: {}, answerMsMedian: 0, answerMsMax: 0 };
  const answerMs: number[] = [];
  // Answers to these frames carry id null (whole-frame errors) or are arrays: none settles a request
  // of the client, so all arrive here, in the order the server finishes them; match them to send times in order.
  const sentAt: number[] = [];
  let stopSending = false;
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const sendOne = () => {
    if (stopSending || client.closed) return;
    summary.sent++;
    sentAt.push(performance.now());
    client.sendFrame(frame);
  };
  client.parseLimit = 64 * 1024;
  client.onOther = (message: any, text) => {
    if (message && typeof message === "object" && "method" in message) return; // a notification (connected)
    summary.answered++;
    const t = sentAt.shift();
    if (t !== undefined) answerMs.push(performance.now() - t);
    tally(text, summary);
    if (stopSending) {
      if (summary.answered >= summary.sent) finish();
    } else sendOne();
  };
  client.socket.on("close", (code, reason) => {
    summary.closed = `${code} ${String(reason)}`;
    finish();
  });
  process.stdout.write("attacker ready\n");
  for (let i = 0; i < window; i++) sendOne();
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  stopSending = true;
  if (summary.answered >= summary.sent) finish();
  const timeout = setTimeout(finish, 60_000);
  await finished;
  clearTimeout(timeout);
  answerMs.sort((a, b) => a - b);
  summary.answerMsMedian = answerMs.length ? answerMs[answerMs.length >> 1] : Number.NaN;
  summary.answerMsMax = answerMs.length ? answerMs[answerMs.length - 1] : Number.NaN;
  process.stderr.write(`attacker summary ${JSON.stringify(summary)}\n`);
  await client.close();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`attacker: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
