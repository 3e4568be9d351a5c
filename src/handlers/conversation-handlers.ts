import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { Conversation, ConversationRecord, ConversationSettings, Plan } from "../../protocol/index.js";
import { DEFAULT_CONVERSATION_SETTINGS } from "../../protocol/settings-defaults.js";
import type { App, RequestContext } from "../app.js";
import { readGenerationDiff } from "../generation/generation-diff.js";
import { newId } from "../ids.js";
import { RpcError } from "../rpc/rpc-error.js";
import { InvalidCursorError } from "../store/conversation-store.js";
import { createWithRecords, pagesOf } from "./create-with-records.js";
import { planSetBy } from "./fork-plan.js";
import { forkPoint } from "./fork-point.js";
import { checkImportedHistory, toStoredRecords } from "./history-import.js";
import { checkTextSize } from "./text-size.js";
import type { DamagedHandlers, MethodHandlers } from "./scope-binding.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";

type Handlers = MethodHandlers;

/** Records are read this many at a time for conversation.get, so an oversized answer is refused before it is built. */
const READ_CHUNK = 500;

/** The protocol's defaults, under the server's tool time limit, under the configuration's `conversations.settings`. */
export function defaultSettings(app: App): ConversationSettings {
  return { ...DEFAULT_CONVERSATION_SETTINGS, toolTimeoutMs: app.config.tools.timeoutMs, ...app.config.conversations.settings };
}

/** A workspace must be an existing directory; relative paths are taken from the server's cwd. */
async function checkWorkspace(workspace: string): Promise<string> {
  const absolute = resolve(workspace);
  const info = await stat(absolute).catch(() => undefined);
  if (!info?.isDirectory()) throw RpcError.invalidParam("workspace", `"${absolute}" is not an existing directory`);
  return absolute;
}

export const conversationCreate: Handlers["conversation.create"] = async (params, { app }) => {
  if (params.system) checkTextSize("system", params.system, app.config.limits.maxMessageBytes);
  app.agent.modes.check(params.settings?.mode, "settings.mode");
  // The whole history is checked before anything is created: a refused import leaves nothing behind.
  if (params.records) checkImportedHistory(params.records, app.config.limits.maxMessageBytes);
  const workspace = params.workspace ? await checkWorkspace(params.workspace) : null;
  const now = new Date().toISOString();
  const conversation: Conversation = {
    id: params.id ?? newId("c"),
    title: params.title ?? "",
    createdAt: now,
    updatedAt: now,
    model: params.model ?? null,
    system: params.system ?? null,
    workspace,
    settings: { ...defaultSettings(app), ...params.settings },
    recordCount: 0,
  };
  const mcpServers = params.mcpServers ?? [];
  // The servers are stored before the id is handed out; a failed write removes the conversation (createWithRecords).
  const withServers = async (runtime: ConversationRuntime) => {
    if (mcpServers.length > 0) await runtime.storeMcpServers(mcpServers);
  };
  const runtime =
    params.records?.length || mcpServers.length > 0
      ? await createWithRecords(app, conversation, pagesOf(toStoredRecords(params.records ?? [], now), READ_CHUNK), withServers)
      : await app.hub.create(conversation);
  // Unless it left memory meanwhile: its servers start when it is loaded again.
  if (mcpServers.length > 0 && app.hub.loaded(runtime.id) === runtime) await app.mcp.conversations.attach(runtime.id, runtime.mcpServers);
  return runtime.handle.conversation;
};

/** The default title of a fork, kept within the 500 characters a title may have. */
function forkTitle(title: string): string {
  return title === "" ? "(fork)" : `${title.slice(0, 493)} (fork)`;
}

export const conversationFork: Handlers["conversation.fork"] = async (params, { app }, source) => {
  const { handle } = source;
  const read = (from: number, to: number) => {
    source.lastUsed = Date.now(); // a long copy keeps the original loaded
    return handle.readRecords(from, to);
  };
  // Records are append-only and only an open round's records change later, so those before the cut stay as read here.
  const end = await forkPoint(read, handle.recordCount, params.atRecord);
  const original = handle.conversation;
  const now = new Date().toISOString();
  const conversation: Conversation = {
    id: newId("c"),
    title: params.title ?? forkTitle(original.title),
    createdAt: now,
    updatedAt: now,
    model: original.model,
    system: original.system,
    workspace: original.workspace,
    settings: { ...original.settings },
    recordCount: 0,
  };
  let plan: Plan | undefined;
  async function* copy(): AsyncIterable<ConversationRecord[]> {
    for (let from = 0; from < end; from += READ_CHUNK) {
      const page = await read(from, Math.min(end, from + READ_CHUNK));
      for (const record of page) plan = (await planSetBy(record)) ?? plan;
      yield page.map((record) => {
        if (record.type === "tool_call" && (record.status === "pending" || record.status === "executing")) {
          // forkPoint cut before every unsettled call; reaching one means that reasoning no longer holds.
          throw new Error(`fork of ${original.id}: record ${record.id} at or before position ${from + page.length} is ${record.status}`);
        }
        // Record ids are unique within the server; toolCallIds are the model's and stay.
        return { ...record, id: newId("r") };
      });
    }
  }
  try {
    const runtime = await createWithRecords(app, conversation, copy(), async (fork) => {
      if (plan) await fork.startWithPlan(plan);
    });
    return runtime.handle.conversation;
  } catch (error) {
    if (source.deleted) throw RpcError.conversationNotFound(params.conversationId);
    throw error;
  }
};

export const conversationList: Handlers["conversation.list"] = async (params, { app }) => {
  try {
    const { parentConversationId } = params;
    const page = await app.store.list({ limit: params.limit ?? 50, cursor: params.cursor, ...(parentConversationId !== undefined ? { parentConversationId } : {}) });
    return {
      data: page.data,
      ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      ...(page.damaged?.length ? { damaged: page.damaged.map((d) => ({ conversationId: d.id, problem: d.problem })) } : {}),
    };
  } catch (error) {
    if (error instanceof InvalidCursorError) throw RpcError.invalidParam("cursor", error.message);
    throw error;
  }
};

export const conversationGet: Handlers["conversation.get"] = async (params, { app }, runtime) => {
  const { handle } = runtime;
  const conversation = handle.conversation;
  const state = runtime.state();
  if (!params.includeRecords) return { conversation, state };
  const from = params.recordsFrom ?? 0;
  const to = Math.min(handle.recordCount, params.recordsLimit === undefined ? Infinity : from + params.recordsLimit);
  const max = app.config.limits.maxReplyBytes;
  const records: ConversationRecord[] = [];
  let bytes = 0;
  for (let at = from; at < to; at += READ_CHUNK) {
    runtime.lastUsed = Date.now(); // a long read keeps the conversation loaded
    for (const record of await handle.readRecords(at, Math.min(to, at + READ_CHUNK))) {
      bytes += JSON.stringify(record).length;
      if (bytes > max) {
        throw RpcError.limitExceeded(
          `the records from position ${from} are over ${max} bytes, the most one reply may carry; page with recordsFrom and recordsLimit (the conversation has ${handle.recordCount} records)`,
          "maxReplyBytes",
          max,
        );
      }
      records.push(record);
    }
  }
  return { conversation, records, state };
};

/** Read from the stored records (each file call's netChange), so it answers the same after a restart. */
export const conversationDiff: Handlers["conversation.diff"] = async (params, _context, runtime) => {
  runtime.lastUsed = Date.now();
  return readGenerationDiff(runtime.handle, params.generationId, runtime.generation?.id);
};

export const conversationUpdate: Handlers["conversation.update"] = async (params, { app }, runtime) => {
  if (params.system) checkTextSize("system", params.system, app.config.limits.maxMessageBytes);
  const mode = modeParam(params);
  app.agent.modes.check(mode, params.mode !== undefined ? "mode" : "settings.mode");
  const workspace =
    params.workspace === undefined || params.workspace === null ? params.workspace : await checkWorkspace(params.workspace);
  // Built from the metadata as the previous change left it (a running generation stores its usage totals there too).
  const change = (current: Conversation): Conversation => ({
    ...current,
    title: params.title ?? current.title,
    model: params.model === undefined ? current.model : params.model,
    system: params.system === undefined ? current.system : params.system,
    workspace: workspace === undefined ? current.workspace : workspace,
    settings: { ...current.settings, ...params.settings, ...(mode !== undefined ? { mode } : {}) },
    updatedAt: new Date().toISOString(),
  });
  if (params.mcpServers !== undefined && JSON.stringify(params.mcpServers) !== JSON.stringify(runtime.mcpServers)) {
    await runtime.storeMcpServers(params.mcpServers);
    if (app.hub.loaded(runtime.id) === runtime) await app.mcp.conversations.attach(runtime.id, runtime.mcpServers);
  }
  // The servers are not part of the metadata clients see: changing only them changes neither updatedAt nor announces anything.
  if (Object.keys(params).every((key) => key === "conversationId" || key === "mcpServers")) return runtime.handle.conversation;
  await runtime.updateConversation(change, () =>
    runtime.publish("conversation_updated", { conversation: runtime.handle.conversation, deleted: false }),
  );
  return runtime.handle.conversation;
};

/** conversation.update's top-level `mode` is settings.mode said shorter; given both, they must agree. */
function modeParam(params: { mode?: string; settings?: { mode?: string } }): string | undefined {
  const inSettings = params.settings?.mode;
  if (params.mode !== undefined && inSettings !== undefined && params.mode !== inSettings) {
    throw RpcError.invalidParam("mode", `"${params.mode}" differs from settings.mode "${inSettings}": give one of them`);
  }
  return params.mode ?? inSettings;
}

export const conversationDelete: Handlers["conversation.delete"] = async (_params, { app }, runtime) => {
  await app.hub.delete(runtime);
  return {};
};

/** A conversation whose files are damaged cannot be loaded, but it can be removed. */
export const deleteDamaged: DamagedHandlers["conversation.delete"] = async (params, { app }, damage) => {
  if (await app.hub.deleteUnloaded(params.conversationId)) return {};
  throw damage;
};

export const conversationSubscribe: Handlers["conversation.subscribe"] = (params, { app, connection }) =>
  app.hub.follow(connection, params.conversationId, params.afterSeq);

export const conversationUnsubscribe: Handlers["conversation.unsubscribe"] = async (params, { app, connection }) => {
  await app.hub.leave(connection, params.conversationId);
  return {};
};
