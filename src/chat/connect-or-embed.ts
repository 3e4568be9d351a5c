/**
 * A client connection for the client commands: to `--url`, or to a server
 * started in this process on a free loopback port, so that one command works
 * on a fresh machine with nothing else running. Either way the commands speak
 * the protocol through the generated client, as any other client would.
 */
import { WebSocket } from "ws";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { SERVER_VERSION } from "../server-version.js";
import type { ConnectionTarget } from "./chat-options.js";

export interface OpenConnection {
  client: AgentwireClient;
  /** Where it connected (the embedded server's URL when embedded). */
  url: string;
  embedded: boolean;
  /** Close the client, then stop the embedded server (if any). */
  close(): Promise<void>;
}

/** A connection that could not be made; the message says what to change. */
export class ConnectError extends Error {}

export async function connectOrEmbed(target: ConnectionTarget, clientName: string): Promise<OpenConnection> {
  const clientInfo = { name: clientName, version: SERVER_VERSION };
  if (target.url !== undefined) {
    let client;
    try {
      client = await AgentwireClient.connect(target.url, { WebSocket, token: target.token, clientInfo, requestTimeoutMs: 30_000 });
    } catch (error) {
      throw new ConnectError(`cannot connect to ${target.url}: ${(error as Error).message}`);
    }
    return { client, url: target.url, embedded: false, close: () => client.close() };
  }
  // Loaded here: a command given --url never pays for the server's modules.
  const { startServer } = await import("../server.js");
  const { knownStartFailure } = await import("../start-failure.js");
  const { killAllProcessGroups } = await import("../tools/process-group.js");
  // Tool process groups must not outlive the command, however it ends.
  process.on("exit", killAllProcessGroups);
  const config = target.embedded!;
  let server;
  try {
    server = await startServer(config);
  } catch (error) {
    const known = knownStartFailure(error);
    if (known?.kind === "data-dir-locked") {
      throw new ConnectError(`${known.message} (a server already uses it: connect to it with --url, or pick another --data-dir)`);
    }
    if (known) throw new ConnectError(known.message);
    throw error;
  }
  let client;
  try {
    client = await AgentwireClient.connect(server.url, { WebSocket, token: config.server.token, clientInfo });
  } catch (error) {
    await server.close();
    throw new ConnectError(`cannot connect to the embedded server: ${(error as Error).message}`);
  }
  return {
    client,
    url: server.url,
    embedded: true,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}
