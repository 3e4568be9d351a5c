import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Conversation, ConversationRecord, HistorySession } from "../../protocol/index.js";
import type { ParsedConfigFile } from "../../protocol/config.js";
import { assembleRecords, type AssembledCompaction } from "../history/history-records.js";
import { newId } from "../ids.js";
import { RpcError } from "../rpc/rpc-error.js";
import { defaultSettings } from "./conversation-handlers.js";
import { createWithRecords, pagesOf } from "./create-with-records.js";
import { checkImportedHistory, toStoredRecords } from "./history-import.js";
import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

/** Records stored per write, as conversation.create stores an import. */
const PAGE = 500;

export const historySources: Handlers["history.sources"] = async (_params, { app }) => ({
  enabled: app.history.enabled,
  sources: app.history.enabled ? await app.history.sources() : [],
});

export const historyList: Handlers["history.list"] = async (params, { app }) => {
  if (params.cwd !== undefined && !isAbsolute(params.cwd)) throw RpcError.invalidParam("cwd", "must be an absolute path");
  const after = params.cursor === undefined ? undefined : decodeCursor(params.cursor);
  let sessions = await app.history.sessions();
  if (params.source) sessions = sessions.filter((s) => s.source === params.source);
  if (params.cwd !== undefined) sessions = sessions.filter((s) => s.cwd !== null && within(resolve(params.cwd!), s.cwd));
  // The cursor is the last session shown (not a position): a session added meanwhile does not shift the pages.
  const from = after ? sessions.findIndex((s) => s.updatedAt < after.updatedAt || (s.updatedAt === after.updatedAt && s.id > after.id)) : 0;
  const limit = params.limit ?? 50;
  const data = from < 0 ? [] : sessions.slice(from, from + limit);
  const more = from >= 0 && from + limit < sessions.length;
  return { data, ...(more ? { nextCursor: encodeCursor(data[data.length - 1]!) } : {}) };
};

export const historyImport: Handlers["history.importSession"] = async (params, { app }) => {
  if (!app.history.enabled) throw RpcError.invalidParam("id", "history indexing is off (history.enabled is false)");
  const found = await app.history.read(params.id);
  if (!found) throw RpcError.invalidParam("id", `no indexed session "${params.id}"; history.list gives the ids`);
  if ("problem" in found) throw RpcError.invalidParam("id", `session "${params.id}": ${found.problem}`);
  const { session, parsed } = found;
  const maxBytes = app.config.limits.maxMessageBytes;
  const assembled = assembleRecords(parsed.items, maxBytes);
  // The same check as conversation.create { records }: what is stored is always a valid model context.
  checkImportedHistory(assembled.records, maxBytes);
  const now = new Date().toISOString();
  const conversation: Conversation = {
    id: newId("c"),
    title: params.title ?? session.title.slice(0, 500),
    createdAt: now,
    updatedAt: now,
    ...servingRuntime(app.config.runtimes, session),
    system: null,
    workspace: existingDirectory(session.cwd),
    settings: defaultSettings(app),
    recordCount: 0,
  };
  const runtime = await createWithRecords(app, conversation, pagesOf(withCompactions(toStoredRecords(assembled.records, now), assembled.compactions, session.model, now), PAGE));
  return {
    conversation: runtime.handle.conversation,
    recordCount: assembled.records.length + assembled.compactions.length,
    skipped: assembled.skipped + parsed.skipped + parsed.damaged.length + parsed.unknown.length,
    truncated: assembled.truncated,
  };
};

/**
 * The session's model as agentwire names it: `<runtime>/<model>` when a
 * configured runtime of the same kind serves it (Codex sessions by a codex
 * runtime, Claude Code sessions by a claude runtime); else null, the
 * server's default (a provider's model names are not the runtime's). When
 * that runtime's home is the one the session was read from, the runtime
 * holds the session itself: the next step resumes it (runtimeSession)
 * rather than starting one that knows nothing of it. A sub-agent's
 * transcript is not a session its runtime resumes.
 */
function servingRuntime(runtimes: ParsedConfigFile["runtimes"] | undefined, session: HistorySession): Pick<Conversation, "model" | "runtimeSession"> {
  const found = Object.entries(runtimes ?? {}).find(([, runtime]) => runtime.runtime === session.source);
  if (!session.model || !found) return { model: null };
  const [name, runtime] = found;
  const home =
    runtime.home ??
    (session.source === "codex" ? (process.env.CODEX_HOME ?? join(homedir(), ".codex")) : (process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude")));
  const folder = resolve(home, session.source === "codex" ? "sessions" : "projects");
  const own = session.parentId === undefined && within(folder, session.path);
  const sessionId = session.id.slice(session.source.length + 1);
  return { model: `${name}/${session.model}`, ...(own ? { runtimeSession: { runtime: name, sessionId } } : {}) };
}

/** The runtime's compactions put between the checked records, each where the runtime made it (always at a round's end). */
function withCompactions(records: ConversationRecord[], compactions: readonly AssembledCompaction[], model: string | null, now: string): ConversationRecord[] {
  if (compactions.length === 0) return records;
  const out: ConversationRecord[] = [];
  let next = 0;
  const add = (c: AssembledCompaction) =>
    out.push({
      type: "compaction",
      id: newId("r"),
      summary: c.summary,
      trigger: "imported",
      model: model ?? "unknown",
      tokensBefore: 0,
      tokensAfter: Math.ceil(c.summary.length / 4),
      timestamp: c.timestamp ?? now,
    });
  records.forEach((record, i) => {
    while (next < compactions.length && compactions[next]!.before <= i) add(compactions[next++]!);
    out.push(record);
  });
  while (next < compactions.length) add(compactions[next++]!);
  return out;
}

function within(folder: string, cwd: string): boolean {
  const path = relative(folder, cwd);
  return path === "" || (!path.startsWith(`..${sep}`) && path !== ".." && !isAbsolute(path));
}

function existingDirectory(path: string | null): string | null {
  if (!path || !isAbsolute(path) || !existsSync(path)) return null;
  try {
    return statSync(path).isDirectory() ? path : null;
  } catch {
    return null;
  }
}

function encodeCursor(session: HistorySession): string {
  return Buffer.from(JSON.stringify([session.updatedAt, session.id])).toString("base64url");
}

function decodeCursor(cursor: string): { updatedAt: string; id: string } {
  try {
    const [updatedAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (typeof updatedAt === "string" && typeof id === "string") return { updatedAt, id };
  } catch {
    // reported below
  }
  throw RpcError.invalidParam("cursor", "not a cursor history.list gave");
}
