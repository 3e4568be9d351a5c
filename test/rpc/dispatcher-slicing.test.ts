/**
 * A long batch gives other connections a turn: the dispatcher yields to the
 * event loop between members once a slice of synchronous work is spent, so
 * work queued by others (here: a probe on setImmediate) runs during the
 * batch instead of after it.
 */
import { describe, expect, it } from "vitest";
import { handlers } from "../../src/handlers/handler-table.js";
import { createLogger } from "../../src/logging/logger.js";
import { Dispatcher, type CallContext, type HandlerTable } from "../../src/rpc/dispatcher.js";

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {}
}

function dispatcherWith(sliceMs: number) {
  const table = { ...handlers, "tools.list": () => (busy(2), { tools: [] }) } as unknown as HandlerTable<CallContext>;
  return new Dispatcher<CallContext>({ handlers: table, log: createLogger("silent"), limits: { sliceMs } });
}

async function probeTicksDuring(work: Promise<unknown>): Promise<number> {
  let ticks = 0;
  let done = false;
  const probe = () => {
    if (done) return;
    ticks++;
    setImmediate(probe);
  };
  setImmediate(probe);
  await work;
  done = true;
  return ticks;
}

const context = (): CallContext => ({ connection: { id: "k_test", initialized: true, experimentalApi: false } });
const batch = JSON.stringify(Array.from({ length: 30 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools.list" })));

describe("time slicing", () => {
  it("lets other work run between members of a 60 ms batch", async () => {
    const ticks = await probeTicksDuring(dispatcherWith(4).handleFrame(batch, context()));
    // 30 members × 2 ms in 4 ms slices: about 15 yields.
    expect(ticks).toBeGreaterThanOrEqual(8);
  });

  it("(control) without slicing the same batch runs in one go", async () => {
    const ticks = await probeTicksDuring(dispatcherWith(1e9).handleFrame(batch, context()));
    expect(ticks).toBeLessThanOrEqual(2);
  });
});
