/**
 * An editor for the ACP tests: the shipped `agentwire acp` (dist/bundle/cli.cjs)
 * as a child process, driven by the ACP SDK's own client side — the code
 * editors embed. Every byte the child writes to stdout is kept, so a test can
 * check that nothing but ACP frames went there.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { cleanEnv } from "../harness/child-env.js";
import { REPO_ROOT } from "../harness/cli-process.js";

export type PermissionAnswer = (request: acp.RequestPermissionRequest, signal: AbortSignal) => Promise<acp.RequestPermissionResponse>;
export type ElicitationAnswer = (request: acp.CreateElicitationRequest, signal: AbortSignal) => Promise<acp.CreateElicitationResponse>;

export interface Editor {
  agent: acp.ClientContext;
  child: ChildProcess;
  /** Updates received, by session. */
  updates(sessionId: string): acp.SessionUpdate[];
  /** Permission requests received, in order. */
  permissions: acp.RequestPermissionRequest[];
  /** How the next permission requests are answered (default: never). */
  answer: PermissionAnswer;
  /** Elicitations (questions) received, in order, and how they are answered (default: never). */
  elicitations: acp.CreateElicitationRequest[];
  elicit: ElicitationAnswer;
  stdout(): string;
  stderr(): string;
  /** Close stdin and wait for the process to end. */
  close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const live = new Set<ChildProcess>();

export async function startEditor(entry: string, args: string[], env: Record<string, string>, cwd: string): Promise<Editor> {
  const child = spawn(process.execPath, [join(REPO_ROOT, entry), "acp", ...args], { cwd, env: cleanEnv(env), stdio: ["pipe", "pipe", "pipe"] });
  live.add(child);
  let out = "";
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  // The raw bytes are kept; the SDK reads the same bytes.
  const copy = new Readable({ read() {} });
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
    copy.push(chunk);
  });
  child.stdout!.on("end", () => copy.push(null));
  const updates = new Map<string, acp.SessionUpdate[]>();
  const editor: Editor = {
    agent: undefined as unknown as acp.ClientContext,
    child,
    updates: (sessionId) => updates.get(sessionId) ?? [],
    permissions: [],
    answer: (_request, signal) =>
      new Promise((resolve) => signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }))),
    elicitations: [],
    elicit: (_request, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve({ action: "cancel" }))),
    stdout: () => out,
    stderr: () => err,
    async close() {
      child.stdin!.end();
      return exited;
    },
  };
  const app = acp
    .client({ name: "test-editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const list = updates.get(params.sessionId) ?? [];
      list.push(params.update);
      updates.set(params.sessionId, list);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
      editor.permissions.push(params);
      return editor.answer(params, signal);
    })
    .onRequest(acp.methods.client.elicitation.create, ({ params, signal }) => {
      editor.elicitations.push(params);
      return editor.elicit(params, signal);
    });
  const connection = app.connect(
    acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(copy) as ReadableStream<Uint8Array>),
  );
  editor.agent = connection.agent;
  return editor;
}

/** Kill what a test left running. */
export async function killEditors(): Promise<void> {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("close", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
}

/** The text of the agent_message_chunk updates, joined. */
export function agentText(updates: acp.SessionUpdate[]): string {
  return updates
    .filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: "agent_message_chunk" }> => u.sessionUpdate === "agent_message_chunk")
    .map((u) => (u.content.type === "text" ? u.content.text : ""))
    .join("");
}
