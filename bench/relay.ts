/**
 * The two-hop floor: a bare relay process between the fake and the driver.
 * For each WebSocket text frame `{"model": "..."}` it POSTs a streaming chat
 * request to the fake (node:http, keep-alive), and forwards each content
 * delta at once as one text frame; `{"done":true}` ends the answer. No
 * protocol, no store, no SDK: what any server in the middle costs on this
 * machine (two process wake-ups instead of one), so agentwire's own share
 * of the latency is agentwire − relay.
 *
 *   node dist/bench/relay.js --fake http://127.0.0.1:PORT/v1
 * prints `relay listening on ws://127.0.0.1:PORT`.
 */
import { Agent, request } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { WebSocketServer } from "ws";

const { values } = parseArgs({ options: { fake: { type: "string" } } });
if (!values.fake) {
  process.stderr.write("relay: --fake URL is required\n");
  process.exit(2);
}
const target = new URL(`${values.fake.replace(/\/+$/, "")}/chat/completions`);
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
wss.on("connection", (socket) => {
  socket.on("message", (data) => {
    const { model } = JSON.parse(String(data)) as { model: string };
    const body = JSON.stringify({
      model,
      messages: [{ role: "user", content: "relay" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const req = request(
      target,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.setEncoding("utf8");
        let buffer = "";
        res.on("data", (chunk: string) => {
          buffer += chunk;
          let end: number;
          let out = "";
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (!event.startsWith("data: ") || event === "data: [DONE]") continue;
            const content = JSON.parse(event.slice(6)).choices?.[0]?.delta?.content;
            if (typeof content === "string") out += content;
          }
          if (out) socket.send(JSON.stringify({ delta: out }));
        });
        res.on("end", () => socket.send(JSON.stringify({ done: true })));
      },
    );
    req.on("error", (error) => socket.send(JSON.stringify({ error: error.message })));
    req.end(body);
  });
});
wss.on("listening", () => {
  const { port } = wss.address() as AddressInfo;
  process.stdout.write(`relay listening on ws://127.0.0.1:${port}\n`);
});
const stop = () => wss.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
