/**
 * TurnGate (src/generation/turn-gate.ts): at most `perTurn` model-call starts
 * per turn of the event loop, the rest in order in later turns, with the
 * loop's I/O polled in between; a caller alone passes at once.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { TurnGate } from "../../src/generation/turn-gate.js";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

it("lets a caller alone through at once, with no hop", () => {
  const gate = new TurnGate(8);
  expect(gate.pass()).toBeUndefined();
});

it("lets perTurn through in one turn and the rest in order, perTurn per later turn", async () => {
  const gate = new TurnGate(2);
  const passed: number[] = [];
  const waits = Array.from({ length: 5 }, (_, i) => {
    const wait = gate.pass();
    if (!wait) passed.push(i);
    else void wait.then(() => passed.push(i));
    return wait;
  });
  expect(waits.map((w) => w === undefined)).toEqual([true, true, false, false, false]);
  expect(gate.waiting).toBe(3);
  await nextTurn();
  expect(passed).toEqual([0, 1, 2, 3]);
  await nextTurn();
  expect(passed).toEqual([0, 1, 2, 3, 4]);
  expect(gate.waiting).toBe(0);
  // A later turn starts afresh.
  await nextTurn();
  expect(gate.pass()).toBeUndefined();
});

let server: Server | undefined;
afterEach(() => server?.close());

it("polls I/O between its turns: data that arrives while callers wait is handled before the last of them starts", async () => {
  const order: string[] = [];
  let peer: Socket | undefined;
  server = createServer((socket) => (peer = socket));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const client = connect(port, "127.0.0.1");
  await new Promise<void>((resolve) => client.on("connect", () => resolve()));
  await expect.poll(() => peer !== undefined).toBe(true);
  const received = new Promise<void>((resolve) => client.on("data", () => (order.push("io"), resolve())));

  const gate = new TurnGate(1);
  const all = Array.from({ length: 4 }, (_, i) => (gate.pass() ?? Promise.resolve()).then(() => order.push(`start ${i}`)));
  // In the same turn as the callers: a token arrives for a stream already running.
  peer!.write("token");
  await Promise.all([...all, received]);
  client.destroy();
  peer!.destroy();
  expect(order[0]).toBe("start 0");
  // Without the gate every start would run before the data is read.
  expect(order.indexOf("io")).toBeLessThan(order.indexOf("start 3"));
});

it("refuses a perTurn that is not a positive integer", () => {
  expect(() => new TurnGate(0)).toThrow(RangeError);
  expect(() => new TurnGate(1.5)).toThrow(RangeError);
});
