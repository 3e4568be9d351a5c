/**
 * Model calls asked to start together start one per turn of the event loop
 * (src/generation/start-lane.ts), so I/O that arrived meanwhile — the tokens
 * of streams already running — is handled between two starts.
 */
import { MessageChannel } from "node:worker_threads";
import { expect, it } from "vitest";
import { modelCallTurn } from "../../src/generation/start-lane.js";

it("starts asked together take a turn of the loop each: I/O that arrives after the first is handled before the second", async () => {
  const order: string[] = [];
  const { port1, port2 } = new MessageChannel();
  const arrived = new Promise<void>((resolve) =>
    port2.once("message", () => {
      order.push("io");
      resolve();
    }),
  );
  const starts = ["a", "b", "c"].map((name) =>
    modelCallTurn().then(() => {
      order.push(name);
      // Something on its way while the first starts (a token from the endpoint).
      if (name === "a") port1.postMessage("token");
    }),
  );
  await Promise.all([...starts, arrived]);
  port1.close();
  expect(order).toEqual(["a", "io", "b", "c"]);
});

it("a lone start goes at once (the next check phase), and the lane empties", async () => {
  let started = false;
  const start = modelCallTurn().then(() => (started = true));
  expect(started).toBe(false);
  await start;
  await modelCallTurn();
  expect(started).toBe(true);
});
