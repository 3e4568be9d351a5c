/**
 * The host of the worker-writes experiment (bench/scenarios/worker-writes.ts):
 * does moving socket writes off the main thread pay?
 *
 * One process produces fan-out traffic shaped like the fan-out scenario —
 * every `delay` ms, one small JSON notification per conversation, each sent
 * to every connection subscribed to it — in one of two modes:
 *
 * - `main`: the WebSocket server and every write are on the main thread
 *   (what agentwire does).
 * - `worker`: the WebSocket server lives in a worker thread; the main thread
 *   serializes each event once and posts one message per tick carrying them
 *   all; the worker writes them to the sockets. Sockets cannot be handed to a
 *   worker thread in Node, so the worker owns the listening socket.
 *
 * Each frame carries the hrtime at which the main thread produced it; the
 * driver measures delivery from there. At the end the host prints the main
 * thread's event-loop utilization (what is left for the agent's own work).
 */
import { parseArgs } from "node:util";
import { isMainThread, parentPort, Worker } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import { WebSocketServer, type WebSocket } from "ws";

interface Options {
  mode: "main" | "worker";
  conversations: number;
  subscribers: number;
  ticks: number;
  delay: number;
}

/** A WebSocket server whose connections subscribe by sending `{"sub": <conversation>}`. */
function serve(onListening: (port: number) => void, onSubscribed: (count: number) => void) {
  const bySubscription = new Map<number, WebSocket[]>();
  let subscribed = 0;
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  wss.on("error", (error) => {
    console.error(error);
    process.exit(1);
  });
  wss.on("listening", () => onListening((wss.address() as { port: number }).port));
  wss.on("connection", (socket) => {
    socket.on("error", () => {});
    socket.once("message", (data) => {
      const { sub } = JSON.parse(String(data)) as { sub: number };
      const list = bySubscription.get(sub) ?? [];
      list.push(socket);
      bySubscription.set(sub, list);
      onSubscribed(++subscribed);
    });
  });
  return {
    send(conversation: number, frame: string): void {
      for (const socket of bySubscription.get(conversation) ?? []) socket.send(frame);
    },
  };
}

function frameFor(conversation: number, tick: number): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    method: "generation_progress",
    params: { conversationId: `c${conversation}`, seq: tick, generationId: `g${conversation}`, delta: `t:${process.hrtime.bigint()};`, kind: "text" },
  });
}

if (!isMainThread) {
  // Worker mode, the worker's side: the server, and the writes.
  const server = serve(
    (port) => parentPort!.postMessage({ type: "listening", port }),
    (count) => parentPort!.postMessage({ type: "subscribed", count }),
  );
  parentPort!.on("message", (batch: [number, string][]) => {
    for (const [conversation, frame] of batch) server.send(conversation, frame);
  });
} else {
  const { values } = parseArgs({
    options: {
      mode: { type: "string", default: "main" },
      conversations: { type: "string", default: "100" },
      subscribers: { type: "string", default: "3" },
      ticks: { type: "string", default: "200" },
      delay: { type: "string", default: "10" },
    },
  });
  const options: Options = {
    mode: values.mode === "worker" ? "worker" : "main",
    conversations: Number(values.conversations),
    subscribers: Number(values.subscribers),
    ticks: Number(values.ticks),
    delay: Number(values.delay),
  };
  const expected = options.conversations * options.subscribers;
  let emit: (batch: [number, string][]) => void;
  const start = () => setTimeout(produce, 200);
  const listening = (port: number) => console.log(`worker-writes listening on ws://127.0.0.1:${port} (${options.mode})`);
  const subscribed = (count: number) => {
    if (count === expected) start();
  };
  if (options.mode === "main") {
    const server = serve(listening, subscribed);
    emit = (batch) => {
      for (const [conversation, frame] of batch) server.send(conversation, frame);
    };
  } else {
    // Run from source (tsx), the worker must register tsx's loader itself: Node 20 does not share
    // the main thread's module hooks with a worker.
    const self = new URL(import.meta.url);
    const worker = self.pathname.endsWith(".ts")
      ? new Worker(`import("tsx/esm/api").then((api) => api.tsImport(${JSON.stringify(self.href)}, ${JSON.stringify(self.href)}))`, { eval: true })
      : new Worker(self);
    worker.on("error", (error) => {
      console.error(error);
      process.exit(1);
    });
    worker.on("message", (message: { type: string; port?: number; count?: number }) => {
      if (message.type === "listening") listening(message.port!);
      else if (message.type === "subscribed") subscribed(message.count!);
    });
    emit = (batch) => worker.postMessage(batch);
  }

  let tick = 0;
  let elu0: ReturnType<typeof performance.eventLoopUtilization> | undefined;
  let cpu0: NodeJS.CpuUsage | undefined;
  function produce(): void {
    // The first tenth of the ticks warm up; the figures cover the rest.
    if (tick === Math.floor(options.ticks / 10)) {
      elu0 = performance.eventLoopUtilization();
      cpu0 = process.cpuUsage();
    }
    if (tick === options.ticks) {
      const elu = performance.eventLoopUtilization(elu0);
      const cpu = process.cpuUsage(cpu0);
      // Let the last frames leave before the driver reads the report.
      setTimeout(() => {
        console.log(`report ${JSON.stringify({ mainElu: elu.utilization, processCpuMs: (cpu.user + cpu.system) / 1000, wallMs: elu.idle + elu.active })}`);
      }, 200);
      return;
    }
    const batch: [number, string][] = [];
    for (let c = 0; c < options.conversations; c++) batch.push([c, frameFor(c, tick)]);
    emit(batch);
    tick++;
    setTimeout(produce, options.delay);
  }
}
