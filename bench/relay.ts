/**
 * The two-hop floor: a bare relay process between the fake and the driver.
 * For each WebSocket text frame `{"model": "..."}` it POSTs a streaming chat
 * request to the fake (node:http, keep-alive), and forwards each content
 * delta at once as one text frame; `{"done":true}` ends the answer. No
 * protocol, no store, no SDK: what any server in the middle costs on this
 * machine (two process wake-ups instead of one), so agentwire's own share
 * of the latency is agentwire − relay.
 *
 * Fan-out: `{"join": "g"}` adds the socket to group g (answered
 * `{"joined": "g"}`); `{"model": "...", "group": "g"}` streams the answer to
 * every socket of the group, each delta as one text frame to each — the
 * floor of the fan-out scenarios (C streams × S subscribers).
 *
 *   node dist/bench/relay.js --fake http://127.0.0.1:PORT/v1
 * prints `relay listening on ws://127.0.0.1:PORT`.
 */
import { Agent, request } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { WebSocketServer, type WebSocket } from "ws";

const { values } = parseArgs({ options: { fake: { type: "string" } } });
if (!values.fake) {
  process.stderr.write("relay: --fake URL is required\n");
  process.exit(2);
}
const target = new URL(`${values.fake.replace(/\/+$/, "")}/chat/completions`);
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
const groups = new Map<string, Set<WebSocket>>();

wss.on("connection", (socket) => {
  const joined: string[] = [];
  socket.on("close", () => {
    for (const name of joined) groups.get(name)?.delete(socket);
  });
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { model?: string; group?: string; join?: string };
    if (message.join !== undefined) {
      let group = groups.get(message.join);
      if (!group) groups.set(message.join, (group = new Set()));
      group.add(socket);
      joined.push(message.join);
      socket.send(JSON.stringify({ joined: message.join }));
      return;
    }
    const model = message.model!;
    const targets = message.group !== undefined ? [...(groups.get(message.group) ?? [])] : [socket];
    const send = (text: string) => {
      for (const target of targets) target.send(text);
    };
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
          if (out) send(JSON.stringify({ delta: out }));
        });
        res.on("end", () => send(JSON.stringify({ done: true })));
      },
    );
    req.on("error", (error) => send(JSON.stringify({ error: error.message })));
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
