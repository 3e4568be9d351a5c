/**
 * `agentwire acp`: an Agent Client Protocol agent on stdin/stdout, for the
 * editors that start an agent as a child process (Zed, JetBrains IDEs,
 * Neovim…). It reaches agentwire as `agentwire chat` does (connectOrEmbed:
 * --url, else the server holding the data dir, else one embedded in this
 * process) and speaks to it through the generated client.
 *
 * stdout carries ACP frames and nothing else: every log line goes to stderr.
 * When stdin closes (the editor quits) the process ends, taking its embedded
 * server and the tool processes with it.
 */
import { Readable, Writable } from "node:stream";
import type { ConnectionTarget } from "../chat/chat-options.js";
import { ConnectError, connectOrEmbed, type OpenConnection } from "../chat/connect-or-embed.js";

export interface AcpArgs {
  target: ConnectionTarget;
  /** --max-unsent-bytes: bound of the updates waiting for an editor that stopped reading (update-outbox.ts). */
  maxUnsentBytes?: number;
}

export interface AcpIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Runs until stdin closes; resolves with the exit status. */
export async function runAcp(args: AcpArgs, io: AcpIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const log = (message: string) => io.stderr.write(`agentwire acp: ${message}\n`);
  let connection: OpenConnection;
  try {
    connection = await connectOrEmbed(args.target, "agentwire-acp", { stderr: io.stderr });
  } catch (error) {
    log(error instanceof ConnectError ? error.message : ((error as Error)?.message ?? String(error)));
    return 1;
  }
  for (const notice of connection.client.initializeResult.notices ?? []) log(notice.message);
  // Loaded here, after the connection: the ACP SDK (and its schemas) only when this command runs.
  const acp = await import("@agentclientprotocol/sdk");
  const { AcpAgent } = await import("./acp-agent.js");
  const agent = new AcpAgent({ client: connection.client, log, serverOutlives: !connection.embedded, ...(args.maxUnsentBytes !== undefined ? { maxUnsentBytes: args.maxUnsentBytes } : {}) });
  const stream = acp.ndJsonStream(
    Writable.toWeb(io.stdout as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(io.stdin as Readable) as ReadableStream<Uint8Array>,
  );
  const acpConnection = agent.app().connect(stream);
  let serverGone = false;
  let closing = false;
  connection.client.onClose((info) => {
    if (closing) return;
    serverGone = true;
    log(`the connection to agentwire closed (${info.code}${info.reason ? ` ${info.reason}` : ""})`);
    acpConnection.close();
  });
  // An editor that stops its agent with a signal gets the same orderly end as one that closes stdin.
  let signalled = false;
  const onSignal = () => {
    if (signalled) process.exit(1); // a second signal: stop now
    signalled = true;
    acpConnection.close();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  await acpConnection.closed;
  process.off("SIGTERM", onSignal);
  process.off("SIGINT", onSignal);
  await agent.close().catch(() => {});
  closing = true;
  await connection.close().catch(() => {});
  return serverGone ? 1 : 0;
}
