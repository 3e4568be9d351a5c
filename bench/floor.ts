/**
 * The floor: the driver reading the fake directly, with the request body
 * agentwire sends (POST /v1/chat/completions, stream: true, usage chunk
 * asked for, the server's tool list), SSE parsed as it arrives. Whatever
 * agentwire adds on top of this is agentwire's cost.
 */
import { spawn } from "node:child_process";
import { Agent, request } from "node:http";
import { WebSocket } from "ws";
import { parseStamps } from "../test/fake-openai/scripts.js";
import { emptyTurn, USER_TEXT, type AgentTurn } from "./client.js";

export interface FloorTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Kept alive between requests, like the server's HTTP client. */
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

export function floorTurn(baseUrl: string, model: string, tools: FloorTool[], timeoutMs = 60_000): Promise<AgentTurn> {
  const body = JSON.stringify({
    model,
    messages: [{ role: "user", content: USER_TEXT }],
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length > 0
      ? {
          tools: tools.map((tool) => ({
            type: "function",
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          })),
        }
      : {}),
  });
  const url = new URL(`${baseUrl.replace(/\/+$/, "")}/chat/completions`);
  return new Promise<AgentTurn>((resolve, reject) => {
    const turn: AgentTurn = { ...emptyTurn(), sentNs: 0n };
    const timer = setTimeout(() => {
      req.destroy(new Error(`floor request did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          authorization: "Bearer bench",
          accept: "application/json",
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          clearTimeout(timer);
          res.resume();
          reject(new Error(`floor request answered ${res.statusCode}`));
          return;
        }
        res.setEncoding("utf8");
        let buffer = "";
        res.on("data", (chunk: string) => {
          const now = process.hrtime.bigint();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            for (const line of event.split("\n")) {
              if (!line.startsWith("data: ")) continue;
              const data = line.slice(6);
              if (data === "[DONE]") continue;
              const content = JSON.parse(data).choices?.[0]?.delta?.content;
              if (typeof content !== "string" || content === "") continue;
              turn.firstNs ??= now;
              turn.lastNs = now;
              turn.progress++;
              for (const stamp of parseStamps(content)) {
                turn.tokens++;
                turn.latencies.push(Number(now - stamp) / 1e6);
              }
              if (turn.progress === 1) turn.firstFrameTokens = turn.tokens;
            }
          }
        });
        res.on("end", () => {
          clearTimeout(timer);
          turn.doneNs = process.hrtime.bigint();
          resolve(turn);
        });
        res.on("error", (error) => {
          clearTimeout(timer);
          reject(error);
        });
      },
    );
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    turn.sentNs = process.hrtime.bigint();
    req.end(body);
  });
}

/** The floor of a shell tool run: `bash -c true` in its own process group, spawn → close, ms. */
export function floorShellTrue(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn("bash", ["-c", "true"], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    child.once("error", reject);
    child.once("close", () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
  });
}

export function closeFloorAgent(): void {
  agent.destroy();
}

/** One answer through the two-hop floor (bench/relay.ts) on an open socket. */
export function relayTurn(socket: WebSocket, model: string, timeoutMs = 60_000): Promise<AgentTurn> {
  const turn = watchRelay(socket, timeoutMs);
  socket.send(JSON.stringify({ model }));
  return turn;
}

/** Join `socket` to a fan-out group of the relay; resolves once the relay has. */
export function joinRelayGroup(socket: WebSocket, group: string): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (data: unknown) => {
      if ((JSON.parse(String(data)) as { joined?: string }).joined !== group) return;
      socket.off("message", onMessage);
      resolve();
    };
    socket.on("message", onMessage);
    socket.send(JSON.stringify({ join: group }));
  });
}

/**
 * One fan-out answer through the bare relay: `sockets[0]` asks for it, every
 * socket of the group (all joined before) receives it; one turn per socket.
 */
export function relayFanoutTurn(sockets: WebSocket[], group: string, model: string, timeoutMs = 60_000): Promise<AgentTurn[]> {
  const turns = sockets.map((socket) => watchRelay(socket, timeoutMs));
  sockets[0].send(JSON.stringify({ model, group }));
  return Promise.all(turns);
}

/** What one relay socket receives of the next answer, until its `done`. */
function watchRelay(socket: WebSocket, timeoutMs: number): Promise<AgentTurn> {
  return new Promise<AgentTurn>((resolve, reject) => {
    const turn: AgentTurn = { ...emptyTurn(), sentNs: 0n };
    const finish = (error?: Error) => {
      clearTimeout(timer);
      socket.off("message", onMessage);
      if (error) reject(error);
      else resolve(turn);
    };
    const timer = setTimeout(() => finish(new Error(`relay answer did not finish within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (data: unknown) => {
      const now = process.hrtime.bigint();
      const message = JSON.parse(String(data)) as { delta?: string; done?: boolean; error?: string };
      if (message.error) return finish(new Error(`relay: ${message.error}`));
      if (message.done) {
        turn.doneNs = now;
        return finish();
      }
      turn.firstNs ??= now;
      turn.lastNs = now;
      turn.progress++;
      for (const stamp of parseStamps(message.delta ?? "")) {
        turn.tokens++;
        turn.latencies.push(Number(now - stamp) / 1e6);
      }
      if (turn.progress === 1) turn.firstFrameTokens = turn.tokens;
    };
    socket.on("message", onMessage);
    turn.sentNs = process.hrtime.bigint();
  });
}

export function openRelaySocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}
