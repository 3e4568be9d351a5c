/**
 * Indexed runtime histories: the sessions other agent runtimes keep on this
 * machine — Codex rollouts (`$CODEX_HOME/sessions/**\/*.jsonl`) and Claude
 * Code transcripts (`~/.claude/projects/*\/*.jsonl`) — found, indexed and
 * turned into agentwire conversations on request. The index is built at the
 * first history.* call and kept current by a file watcher while the server
 * runs; the configuration's `history` section says where to look.
 */
import * as z from "zod";
import { Conversation, Timestamp } from "./records.js";

/** Most problems one source lists (problemCount counts them all). */
export const MAX_HISTORY_PROBLEMS = 50;

export const HistorySourceKind = z
  .enum(["codex", "claude"])
  .describe("Which runtime wrote the history: codex (Codex CLI rollouts) or claude (Claude Code transcripts).");

export const HistoryProblem = z
  .object({
    path: z.string().describe("The file (or folder) concerned."),
    message: z.string().describe("What is wrong, in words: e.g. \"2 damaged lines (not JSON): 4, 9\", or \"larger than history.maxFileBytes\"."),
  })
  .describe("Something the indexer could not read. Never fatal: the rest of the file (or source) is still indexed.");

export const HistorySource = z
  .object({
    kind: HistorySourceKind,
    path: z.string().describe("The folder searched: $CODEX_HOME/sessions, or Claude Code's projects folder."),
    exists: z.boolean().describe("Whether the folder exists. A missing one is looked for again at each history.* call."),
    sessionCount: z.number().int().min(0).describe("Sessions indexed from this source."),
    problemCount: z.number().int().min(0).describe("Problems found in this source, all of them (`problems` lists the first ones)."),
    problems: z.array(HistoryProblem).max(MAX_HISTORY_PROBLEMS).describe(`The first ${MAX_HISTORY_PROBLEMS} problems: damaged or unknown lines (one entry per file), files too large, sessions over history.maxSessions.`),
  })
  .describe("One place runtime histories are read from, and what was found there.");

export const HistorySourcesParams = z.strictObject({}).describe("Parameters of history.sources (none).");
export const HistorySourcesResult = z
  .object({
    enabled: z.boolean().describe("history.enabled: false means nothing is indexed and every list is empty."),
    sources: z.array(HistorySource).describe("Every source, Codex first."),
  })
  .describe("The sources of runtime histories and what each holds.");

export const HistorySessionId = z
  .string()
  .min(1)
  .max(300)
  .describe("A session of the index: `codex:<session id>` or `claude:<session id>` (the runtime's own id, stable across restarts).");

export const HistorySession = z
  .object({
    id: HistorySessionId,
    source: HistorySourceKind,
    title: z.string().describe("The first thing the user wrote (whitespace collapsed, at most 200 characters); empty when the session has no user message."),
    cwd: z.string().nullable().describe("The working directory the runtime ran in; null when the file does not say."),
    model: z.string().nullable().describe("The model the runtime used last in the session (its own name for it); null when the file does not say."),
    createdAt: Timestamp.describe("When the session started (its first line; the file's time when no line has one)."),
    updatedAt: Timestamp.describe("When it last changed (its last line with a time; else the file's time)."),
    messageCount: z.number().int().min(0).describe("User and assistant messages with text (tool calls and their results not counted)."),
    path: z.string().describe("The file the session is read from."),
    parentId: HistorySessionId.optional().describe(
      "For a sub-agent's own transcript (Claude Code's `agent-<id>.jsonl`, beside its session or in `<session>/subagents/`): the id of the session that started it. Such a session's id is `claude:agent-<id>`; it is imported on its own like any other.",
    ),
  })
  .describe("One indexed session of another runtime.");

export const HistoryListParams = z
  .strictObject({
    source: HistorySourceKind.optional().describe("Only sessions of this runtime."),
    cwd: z.string().min(1).max(4096).optional().describe("Only sessions whose working directory is this folder or one inside it."),
    limit: z.number().int().min(1).max(500).optional().describe("Most sessions to return; default 50."),
    cursor: z.string().min(1).max(1000).optional().describe("nextCursor of the previous page; omit for the first page."),
  })
  .describe("Parameters of history.list. Sessions come most recently updated first.");
export const HistoryListResult = z
  .object({
    data: z.array(HistorySession).describe("This page, most recently updated first."),
    nextCursor: z.string().optional().describe("Pass as `cursor` for the next page; absent on the last page."),
  })
  .describe("A page of indexed sessions.");

export const HistoryImportSessionParams = z
  .strictObject({
    id: HistorySessionId,
    title: z.string().max(500).optional().describe("Title of the new conversation; default the session's title."),
  })
  .describe("Parameters of history.importSession.");
export const HistoryImportSessionResult = z
  .object({
    conversation: Conversation.describe("The new conversation; its workspace is the session's cwd when that folder exists here."),
    recordCount: z.number().int().min(0).describe("Records stored."),
    skipped: z
      .number()
      .int()
      .min(0)
      .describe(
        "Items of the session that have no agentwire record and were left out: images, system and developer messages, the runtime's injected context (environment, instructions), tool results whose call is not in the file, damaged lines, sub-agent (sidechain) lines.",
      ),
    truncated: z.boolean().describe(`Whether the session was cut (before a user message) to the most records one import may hold; texts longer than limits.maxMessageBytes are cut too.`),
  })
  .describe("What history.importSession made.");

export type HistorySourceKind = z.infer<typeof HistorySourceKind>;
export type HistoryProblem = z.infer<typeof HistoryProblem>;
export type HistorySource = z.infer<typeof HistorySource>;
export type HistorySession = z.infer<typeof HistorySession>;
