/**
 * `npx tsx bench/log-format.ts`: what one log line costs in each format.
 *
 * Why it exists: the issue asked for a well-kept logger (pino) "if it
 * measures no slower on the token path". The logger is not on the token
 * path at all — nothing logs per delta or per frame (the loop logs failures,
 * the transport logs connections) — so the question is only whether our
 * formatter is cheap enough for the lines we do write. It prints the cost
 * per line of the text and json formats into a discarding sink.
 */
import { createLogger, type LogFormat } from "../src/logging/logger.js";

const LINES = 200_000;

function measure(format: LogFormat): number {
  let bytes = 0;
  const log = createLogger("info", { format, write: (line) => (bytes += line.length) }).child({ conversationId: "c_abc", generationId: "g_def" });
  const detail = { toolCallId: "call_1", ms: 12 };
  for (let i = 0; i < 10_000; i++) log.info("warm-up", detail);
  const start = process.hrtime.bigint();
  for (let i = 0; i < LINES; i++) log.info(`tool shell finished in ${i} ms`, detail);
  const ns = Number(process.hrtime.bigint() - start) / LINES;
  if (bytes === 0) throw new Error("nothing written");
  return ns;
}

for (const format of ["text", "json"] as const) {
  console.log(`${format.padEnd(4)}  ${(measure(format) / 1000).toFixed(2)} µs per line (${LINES} lines)`);
}
