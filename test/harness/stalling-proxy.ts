/**
 * A TCP proxy on 127.0.0.1 in front of a real server (Redis) that can stall:
 * while stalled, what clients send is held (their connections stay open,
 * nothing is lost) and reaches the server when the stall ends — what one
 * client sees of a server that stops answering for a while (a long GC, a
 * `CLIENT PAUSE`, a congested link) without pausing the server for everyone
 * else using it.
 */
import { createConnection, createServer, type Socket } from "node:net";

export interface StallingProxy {
  /** redis://127.0.0.1:<port> (or the given scheme) for clients to connect to. */
  url: string;
  /** Hold everything clients send from now on. */
  stall(): void;
  /** Let it through, in order. */
  resume(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(target: { host: string; port: number }, scheme = "redis"): Promise<StallingProxy> {
  /** Each client connection's way to the server, and what it sent while stalled. */
  const links = new Set<{ client: Socket; upstream: Socket; held: Buffer[] }>();
  let stalled = false;
  const server = createServer((client) => {
    const link = { client, upstream: createConnection(target), held: [] as Buffer[] };
    links.add(link);
    // Not piped: a piped stream resumes by itself when the other side drains, which would end a stall.
    client.on("data", (chunk: Buffer) => (stalled ? link.held.push(chunk) : link.upstream.write(chunk)));
    link.upstream.pipe(client);
    const end = () => {
      links.delete(link);
      client.destroy();
      link.upstream.destroy();
    };
    client.on("error", end).on("close", end);
    link.upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    stall() {
      stalled = true;
    },
    resume() {
      stalled = false;
      for (const link of links) for (const chunk of link.held.splice(0)) link.upstream.write(chunk);
    },
    async close() {
      for (const link of links) {
        link.client.destroy();
        link.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
