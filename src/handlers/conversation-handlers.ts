import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { Conversation, ConversationSettings } from "../../protocol/index.js";
import type { App, RequestContext } from "../app.js";
import { newId } from "../ids.js";
import type { HandlerTable } from "../rpc/dispatcher.js";
import { RpcError } from "../rpc/rpc-error.js";
import { InvalidCursorError } from "../store/conversation-store.js";

type Handlers = HandlerTable<RequestContext>;

export function defaultSettings(app: App): ConversationSettings {
  return { toolHistoryRounds: 8, maxIterations: 20, toolTimeoutMs: app.config.toolTimeoutMs };
}

/** A workspace must be an existing directory; relative paths are taken from the server's cwd. */
async function checkWorkspace(workspace: string): Promise<string> {
  const absolute = resolve(workspace);
  const info = await stat(absolute).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw RpcError.invalidParam("workspace", `"${absolute}" is not an existing directory`);
  }
  return absolute;
}

export const conversationCreate: Handlers["conversation.create"] = async (params, { app }) => {
  const now = new Date().toISOString();
  const conversation: Conversation = {
    id: newId("c"),
    title: params.title ?? "",
    createdAt: now,
    updatedAt: now,
    model: params.model ?? null,
    system: params.system ?? null,
    workspace: params.workspace ? await checkWorkspace(params.workspace) : null,
    settings: { ...defaultSettings(app), ...params.settings },
    recordCount: 0,
  };
  const runtime = await app.hub.create(conversation);
  return runtime.handle.conversation;
};

export const conversationList: Handlers["conversation.list"] = async (params, { app }) => {
  try {
    return await app.store.list({ limit: params.limit ?? 50, cursor: params.cursor });
  } catch (error) {
    if (error instanceof InvalidCursorError) {
      throw RpcError.invalidParam("cursor", error.message);
    }
    throw error;
  }
};

export const conversationGet: Handlers["conversation.get"] = async (params, { app }) => {
  const runtime = await app.hub.get(params.conversationId);
  return {
    conversation: runtime.handle.conversation,
    ...(params.includeRecords ? { records: [...runtime.handle.records] } : {}),
    state: runtime.state(),
  };
};

export const conversationUpdate: Handlers["conversation.update"] = async (params, { app }) => {
  const runtime = await app.hub.get(params.conversationId);
  const current = runtime.handle.conversation;
  const next: Conversation = {
    ...current,
    title: params.title ?? current.title,
    model: params.model === undefined ? current.model : params.model,
    system: params.system === undefined ? current.system : params.system,
    workspace:
      params.workspace === undefined ? current.workspace : params.workspace === null ? null : await checkWorkspace(params.workspace),
    settings: { ...current.settings, ...params.settings },
    updatedAt: new Date().toISOString(),
  };
  runtime.assertLive();
  const written = runtime.handle.update(next);
  runtime.publish("conversation_updated", { conversation: runtime.handle.conversation, deleted: false });
  await written;
  return runtime.handle.conversation;
};

export const conversationDelete: Handlers["conversation.delete"] = async (params, { app }) => {
  const runtime = await app.hub.get(params.conversationId);
  await app.hub.delete(runtime);
  return {};
};

export const conversationSubscribe: Handlers["conversation.subscribe"] = async (params, { app, connection }) => {
  const runtime = await app.hub.get(params.conversationId);
  const outcome = app.hub.subscribe(connection, runtime, params.afterSeq);
  return { conversation: runtime.handle.conversation, state: runtime.state(), ...outcome };
};

export const conversationUnsubscribe: Handlers["conversation.unsubscribe"] = async (params, { app, connection }) => {
  await app.hub.get(params.conversationId);
  app.hub.unsubscribe(connection, params.conversationId);
  return {};
};
