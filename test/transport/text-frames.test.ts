/**
 * Frames leave the WebSocket transport as bytes it frames itself (once per
 * event, for every subscriber): they must be the bytes ws's own send would
 * write, for every payload length encoding (7-bit, 16-bit and 64-bit) and
 * for multibyte text.
 */
import * as ws from "ws";
import { afterAll, beforeAll, expect, it } from "vitest";
import { eventually } from "../harness/eventually.js";
import { openInitialized, type RawSocket } from "../harness/raw-socket.js";
import { startTestServer, type TestServer } from "../harness/test-server.js";

/** ws's own framing (exported by ws, not in its type declarations). */
const Sender = (ws as unknown as { Sender: unknown }).Sender as {
  frame(data: Buffer, options: { fin: boolean; opcode: number; mask: boolean; readOnly: boolean; rsv1: boolean }): Buffer[];
};
const wsFrame = (text: string) => Buffer.concat(Sender.frame(Buffer.from(text), { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false }));

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

/** Every byte the server sends this socket from now on, as read off TCP beside ws's own reader. */
function tap(raw: RawSocket): () => Buffer {
  const chunks: Buffer[] = [];
  (raw.socket as unknown as { _socket: NodeJS.EventEmitter })._socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  return () => Buffer.concat(chunks);
}

it("sends each subscriber the bytes ws.send would, at every length and with multibyte text", async () => {
  const writer = await ts.connect();
  const { id } = await writer.conversation.create({ title: "frames" });
  const subscribers = [await openInitialized(ts.url), await openInitialized(ts.url)];
  for (const raw of subscribers) await raw.request("conversation.subscribe", { conversationId: id });
  const taps = subscribers.map((raw) => {
    raw.clear();
    return tap(raw);
  });
  const contents = ["€", `ü${"x".repeat(200)}€`, `${"€".repeat(30_000)}ü`, "z".repeat(70_000)];
  for (const content of contents) await writer.message.append({ conversationId: id, role: "user", content });
  for (const raw of subscribers) await raw.waitForFrames(contents.length);
  await eventually(async () => taps.every((bytes, i) => bytes().length === Buffer.concat(subscribers[i]!.frames.map(wsFrame)).length));
  const [first, second] = subscribers;
  expect(first!.frames).toEqual(second!.frames);
  expect(first!.notifications().map((n) => n.params.record.content)).toEqual(contents);
  for (const [i, raw] of subscribers.entries()) expect(taps[i]!().equals(Buffer.concat(raw.frames.map(wsFrame)))).toBe(true);
  for (const raw of subscribers) raw.close();
});
