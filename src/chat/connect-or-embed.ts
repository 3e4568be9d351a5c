/**
 * A client connection for the client commands: to `--url`; else to the
 * server already running on this machine that holds the data dir (it says
 * where it listens beside its LOCK, src/store/data-dir-lock.ts); else to a
 * server started in this process, spoken to over the in-memory link, so that
 * one command works on a fresh machine with nothing else running. Either way the
 * commands speak the protocol through the generated client, as any other
 * client would.
 */
import { AgentwireClient } from "../../clients/typescript/index.js";
import type { LinkServer } from "../server.js";
import { IN_MEMORY_URL, type LinkAcceptor } from "../transport/in-memory-link.js";
import { SERVER_VERSION } from "../server-version.js";
import { loadWs } from "../transport/ws-load.js";
import type { ConnectionTarget } from "./chat-options.js";

export interface OpenConnection {
  client: AgentwireClient;
  /** Where it connected (IN_MEMORY_URL when embedded: the command's own server has no address). */
  url: string;
  embedded: boolean;
  /** Close the client, then stop the embedded server (if any). */
  close(): Promise<void>;
}

/** A connection that could not be made; the message says what to change. */
export class ConnectError extends Error {}

/**
 * How long a command waits for a server that holds the data dir to say where
 * it listens: a server writes that once listening, an instant after taking
 * the LOCK, so only a server still starting (or one that is not an agentwire
 * server able to say so) makes a command wait this long.
 */
export const LOCAL_SERVER_WAIT_MS = 5000;

export interface ConnectOptions {
  /** Where the command says which server it connected to; default process.stderr. */
  stderr?: NodeJS.WritableStream;
  /** Default LOCAL_SERVER_WAIT_MS. */
  localServerWaitMs?: number;
}

export async function connectOrEmbed(target: ConnectionTarget, clientName: string, options: ConnectOptions = {}): Promise<OpenConnection> {
  const clientInfo = { name: clientName, version: SERVER_VERSION };
  if (target.url !== undefined) return connectTo(target.url, target.token, clientInfo);
  const config = target.embedded!;
  const stderr = options.stderr ?? process.stderr;
  // Only the lowdb store is held by one process; with PostgreSQL every command may run its own server, as before.
  // data-dir-lock.js is read at the same time: localServer needs it next (it is in the server's code anyway).
  const [{ isPostgresUrl }] = await Promise.all([import("../store/postgres-url.js"), import("../store/data-dir-lock.js")]);
  const lowdb = !isPostgresUrl(config.server.store);
  if (lowdb) {
    const running = await localServer(config.server.dataDir, options.localServerWaitMs ?? LOCAL_SERVER_WAIT_MS);
    if (running) {
      const connection = await connectToLocal(running, target.token, config.server.dataDir, clientInfo, stderr);
      // The server's notices are about its own working directory; this one is about the command's.
      for (const notice of config.notices) if (notice.code === "data_dir_not_used") stderr.write(`agentwire: ${notice.message}\n`);
      return connection;
    }
  }
  try {
    return await embed(config, clientInfo);
  } catch (error) {
    // Another command or server took the data dir between the look and the start: use it.
    if (!(error instanceof DataDirTaken) || !lowdb) throw error;
    const running = await localServer(config.server.dataDir, options.localServerWaitMs ?? LOCAL_SERVER_WAIT_MS);
    if (running) return connectToLocal(running, target.token, config.server.dataDir, clientInfo, stderr);
    throw new ConnectError(error.message);
  }
}

type ClientInfo = { name: string; version: string };
type Serving = { pid: number; url: string; tokenRequired: boolean };

async function connectTo(url: string, token: string | undefined, clientInfo: ClientInfo): Promise<OpenConnection> {
  let client;
  try {
    // Loaded here: a command with its own server speaks to it in memory and never needs ws (nor the node:https it loads).
    const { WebSocket } = await loadWs();
    client = await AgentwireClient.connect(url, { WebSocket, token, clientInfo, requestTimeoutMs: 30_000 });
  } catch (error) {
    throw new ConnectError(`cannot connect to ${url}: ${(error as Error).message}`);
  }
  return { client, url, embedded: false, close: () => client.close() };
}

async function connectToLocal(
  running: Serving,
  token: string | undefined,
  dataDir: string,
  clientInfo: ClientInfo,
  stderr: NodeJS.WritableStream,
): Promise<OpenConnection> {
  const which = `the agentwire server at ${running.url} (pid ${running.pid}), which holds the data dir ${dataDir}`;
  if (running.tokenRequired && token === undefined) {
    throw new ConnectError(`${which}, needs a token: pass --token-file FILE (or set AGENTWIRE_TOKEN) with its token`);
  }
  const connection = await connectTo(running.url, token, clientInfo).catch((error: Error) => {
    throw new ConnectError(`${which}, could not be reached: ${error.message.replace(/^cannot connect to \S+: /, "")}`);
  });
  stderr.write(`agentwire: connected to ${which}\n`);
  return connection;
}

/**
 * The server holding `dataDir` that a command may connect to; undefined when
 * none holds it (the command starts its own). Waits up to `waitMs` for a
 * holder to say where it listens; an error when it does not, or when the
 * holder is another command's own server.
 */
async function localServer(dataDir: string, waitMs: number): Promise<Serving | undefined> {
  const { dataDirHolder } = await import("../store/data-dir-lock.js");
  const deadline = Date.now() + waitMs;
  for (;;) {
    const holder = await dataDirHolder(dataDir);
    switch (holder.kind) {
      case "free":
        return undefined;
      case "serving":
        return holder;
      case "private":
        throw new ConnectError(
          `the data dir ${dataDir} is in use by another agentwire command (pid ${holder.pid}), whose own server stops with it; ` +
            `run \`agentwire serve\` for the commands to share one server, or pick another --data-dir`,
        );
      case "starting":
        if (Date.now() >= deadline) {
          throw new ConnectError(
            `the data dir ${dataDir} is held by process ${holder.pid}, which has not said where it listens within ${waitMs} ms; ` +
              `connect to it with --url, or pick another --data-dir`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * The server's links, with the frame limit its sockets have: a frame over
 * maxPayloadBytes closes the link with 1009, as ws closes a socket (chat
 * says in words what that means, frame-limit.ts).
 */
function frameLimited(server: LinkServer, maxPayloadBytes: number): LinkAcceptor {
  return {
    acceptLink(link) {
      const session = server.acceptLink(link);
      return {
        receive: (frame) => (Buffer.byteLength(frame) > maxPayloadBytes ? link.close(1009, "Max payload size exceeded") : session.receive(frame)),
        closed: () => session.closed(),
      };
    },
  };
}

/** startServer refused: another process holds the data dir. */
class DataDirTaken extends Error {}

async function embed(config: NonNullable<ConnectionTarget["embedded"]>, clientInfo: ClientInfo): Promise<OpenConnection> {
  // Loaded here: a command given --url, or finding a running server, never pays for the server's modules.
  // Together, not one after the other: each import waits for its files to be read.
  const [{ startServer }, { knownStartFailure }, { killAllProcessGroups }, { inMemoryWebSocket }] = await Promise.all([
    import("../server.js"),
    import("../start-failure.js"),
    import("../tools/process-group.js"),
    import("../transport/in-memory-link.js"),
  ]);
  // Tool process groups must not outlive the command, however it ends.
  process.on("exit", killAllProcessGroups);
  let server;
  try {
    // Not shared: it stops with this command, so no other command may come to depend on it. Nor listening: the command
    // speaks to it in memory, and a port nothing says where to find would be only a tokenless door to its tools.
    server = await startServer(config, { shared: false, listen: false });
  } catch (error) {
    const known = knownStartFailure(error);
    if (known?.kind === "data-dir-locked") throw new DataDirTaken(known.message);
    if (known) throw new ConnectError(known.message);
    throw error;
  }
  let client;
  try {
    // In this process the command's client needs no socket: the in-memory link (as agentwire/embed's connectInMemory)
    // spares a loopback connection, its HTTP upgrade and every frame's WebSocket framing.
    client = await AgentwireClient.connect(IN_MEMORY_URL, { WebSocket: inMemoryWebSocket(frameLimited(server, config.limits.maxPayloadBytes)), token: config.server.token, clientInfo });
  } catch (error) {
    await server.close();
    throw new ConnectError(`cannot connect to the embedded server: ${(error as Error).message}`);
  }
  return {
    client,
    url: IN_MEMORY_URL,
    embedded: true,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}
