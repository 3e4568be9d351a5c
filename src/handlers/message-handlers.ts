import { createHash } from "node:crypto";
import type { MessageCommand, MessageRecord, RequestParams, RequestResult } from "../../protocol/index.js";
import { resolveAttachments } from "../attachments/resolve-attachments.js";
import { newId } from "../ids.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import type { ClientMessageIdEntry } from "../store/conversation-store.js";
import { discoverCommands } from "../skills/discover-commands.js";
import { expandCommand } from "../skills/expand-command.js";
import { checkTextSize } from "./text-size.js";
import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;
type AppendParams = RequestParams<"message.append">;
type AppendResult = RequestResult<"message.append">;
type AppendContext = Parameters<Handlers["message.append"]>[1];

/** Records read at a time when a retried clientMessageId looks its message up, newest first. */
const LOOKUP_PAGE = 200;

export const messageAppend: Handlers["message.append"] = async (params, context, runtime) => {
  if (params.command !== undefined && params.role !== "user") throw RpcError.invalidParam("command", "only user messages are expanded from a command");
  checkTextSize("content", params.content ?? "", context.app.config.limits.maxMessageBytes);
  // Images are not allowed in system messages by the chat API; files there would be read as instructions.
  if ((params.attachments ?? []).length > 0 && params.role !== "user") throw RpcError.invalidParam("attachments", "only user messages carry attachments");
  if (params.role === "assistant" && params.delivery) throw RpcError.invalidParam("delivery", "an assistant message cannot be steered or queued");
  checkExpectedGeneration(runtime, params.expectedGenerationId);
  if (params.role === "assistant") checkAssistantAppend(runtime);
  const clientMessageId = params.clientMessageId;
  if (clientMessageId === undefined) return appendOnce(params, context, runtime, undefined);

  // Idempotent submit: a retry answers what the first attempt stored (or is storing), and appends nothing.
  const digest = digestOf(params);
  const replayed = await replay(runtime, clientMessageId, digest);
  if (replayed) return replayed;
  const inFlight = runtime.appendsInFlight.get(clientMessageId);
  if (inFlight) {
    if (inFlight.digest !== digest) throw differentMessage(clientMessageId, "a message being appended now");
    return (await inFlight.answer) as AppendResult;
  }
  const answer = appendOnce(params, context, runtime, { clientMessageId, digest });
  runtime.appendsInFlight.set(clientMessageId, { digest, answer });
  try {
    return await answer;
  } finally {
    runtime.appendsInFlight.delete(clientMessageId);
  }
};

async function appendOnce(
  params: AppendParams,
  { app }: AppendContext,
  runtime: ConversationRuntime,
  client: { clientMessageId: string; digest: string } | undefined,
): Promise<AppendResult> {
  const { content, command, mode } =
    params.command === undefined ? { content: params.content ?? "", command: undefined, mode: undefined } : await expand(params, runtime, app);
  const inputs = params.attachments ?? [];
  const attachments =
    inputs.length > 0
      ? await resolveAttachments(inputs, {
          workspace: runtime.handle.conversation.workspace ?? process.cwd(),
          handle: runtime.handle,
          contentBytes: Buffer.byteLength(content, "utf8"),
          maxMessageBytes: app.config.limits.maxMessageBytes,
          allowHardLinks: app.config.tools.files.allowHardLinks,
        })
      : [];
  const record: MessageRecord = {
    type: "message",
    id: newId("r"),
    role: params.role,
    content,
    ...(command ? { command } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
    timestamp: new Date().toISOString(),
  };
  runtime.assertLive();
  // Checked again: the generation may have ended (or begun) while the attachments were read.
  checkExpectedGeneration(runtime, params.expectedGenerationId);
  if (mode !== undefined) await switchMode(runtime, mode);
  const entry: ClientMessageIdEntry | undefined = client && { ...client, recordId: record.id };
  if (runtime.generation && params.role !== "assistant") {
    // While a generation runs, a message is held: steered into it at its next model call (the default), or queued.
    const delivery = params.delivery ?? "steer";
    const held = { delivery, record, ...(client ? { clientMessageId: client.clientMessageId } : {}) };
    await runtime.hold(held, { messages: app.config.limits.maxQueuedMessages, bytes: app.config.limits.maxQueuedBytes }, entry);
    return { ...record, delivery: delivery === "steer" ? "steer" : "queued" };
  }
  if (params.role === "assistant") checkAssistantAppend(runtime);
  // Announced once durable; a failed write answers STORAGE_ERROR and leaves no trace.
  await runtime.commit(runtime.handle.append(record), () => runtime.publish("message_added", { record }));
  if (entry) {
    // The record is stored whatever happens here: failing the append now would invite a retry that appends it twice.
    await runtime.storeClientId(entry).catch((error: unknown) => app.log.error(`could not store clientMessageId ${entry.clientMessageId}`, error));
  }
  return record;
}

/**
 * A command's template with the arguments filled in, read fresh from the
 * workspace's and the user's commands directories, and the mode its front
 * matter names (checked here, before anything is stored).
 */
async function expand(params: AppendParams, runtime: ConversationRuntime, app: AppendContext["app"]): Promise<{ content: string; command: MessageCommand; mode?: string }> {
  const maxMessageBytes = app.config.limits.maxMessageBytes;
  const name = params.command ?? "";
  const args = params.arguments ?? "";
  const workspace = runtime.handle.conversation.workspace ?? process.cwd();
  const found = (await discoverCommands({ workspace, signal: AbortSignal.timeout(10_000) })).commands.find((c) => c.name === name);
  if (!found) throw RpcError.invalidParam("command", `no command "${name}" in ${workspace}/.agentwire/commands/ or the user's commands directory (see commands.list)`);
  const content = expandCommand(found.template, args);
  // The expanded text is what is stored and sent: it must fit like any message.
  checkTextSize("content", content, maxMessageBytes);
  if (found.mode !== undefined) {
    const mode = app.agent.modes.get(found.mode);
    if (!mode) {
      throw RpcError.invalidParam("command", `the front matter of ${found.path} names mode "${found.mode}", which this server does not have (${app.agent.modes.list.map((m) => m.id).join(", ")})`);
    }
    // A file in a cloned repository must not make tool calls run unasked: only the user's own commands may switch to such a mode.
    if (mode.approval === "auto" && found.source === "workspace") {
      throw RpcError.invalidParam("command", `the workspace command ${found.path} names mode "${mode.id}", whose tool calls run without asking: only a command in the user's own commands directory may switch to it (or switch with conversation.update { mode })`);
    }
  }
  return { content, command: { name, arguments: args, source: found.source }, ...(found.mode !== undefined ? { mode: found.mode } : {}) };
}

/**
 * A command whose front matter names a mode switches the conversation to
 * it, as conversation.update { mode } would (conversation_updated), before
 * its message is stored: the step that answers it runs in that mode, and
 * the conversation stays in it afterwards.
 */
async function switchMode(runtime: ConversationRuntime, mode: string): Promise<void> {
  if (runtime.handle.conversation.settings.mode === mode) return;
  await runtime.updateConversation(
    (current) => ({ ...current, settings: { ...current.settings, mode }, updatedAt: new Date().toISOString() }),
    () => runtime.publish("conversation_updated", { conversation: runtime.handle.conversation, deleted: false }),
  );
}

/** A stale expectedGenerationId: the client meant a generation that is no longer the running one. */
function checkExpectedGeneration(runtime: ConversationRuntime, expected: string | undefined): void {
  if (expected === undefined) return;
  const running = runtime.generation?.id ?? null;
  if (running !== expected) throw RpcError.generationChanged(expected, running);
}

/** What a retry must repeat: role, content (or command and arguments) and attachments (delivery and the guard may differ). */
function digestOf(params: AppendParams): string {
  return createHash("sha256")
    // Command fields only when given: digests stored before commands existed stay valid across an upgrade.
    .update(JSON.stringify([params.role, params.content, params.attachments ?? [], ...(params.command === undefined ? [] : [params.command, params.arguments ?? ""])]))
    .digest("hex");
}

function differentMessage(clientMessageId: string, what: string): RpcError {
  return RpcError.invalidParam("clientMessageId", `"${clientMessageId}" was already used for ${what} with a different role, content, command or attachments`);
}

/** The answer of an earlier append with this clientMessageId, when it is within the remembered window. */
async function replay(runtime: ConversationRuntime, clientMessageId: string, digest: string): Promise<AppendResult | undefined> {
  const entry = runtime.clientMessageId(clientMessageId);
  if (!entry) return undefined;
  if (entry.digest !== digest) throw differentMessage(clientMessageId, `message ${entry.recordId}`);
  const held = runtime.queue.find((m) => m.record.id === entry.recordId);
  if (held) return { ...held.record, delivery: held.delivery === "steer" ? "steer" : "queued" };
  const { handle } = runtime;
  // Recent ids name recent records: read from the end.
  for (let to = handle.recordCount; to > 0; to -= LOOKUP_PAGE) {
    const page = await handle.readRecords(Math.max(0, to - LOOKUP_PAGE), to);
    const found = page.find((r) => r.id === entry.recordId);
    if (found?.type === "message") return found;
  }
  throw RpcError.invalidParam("clientMessageId", `"${clientMessageId}" was used for message ${entry.recordId}, which is no longer in the conversation (removed from the queue)`);
}

/**
 * A client-written assistant message (history import or reconstruction)
 * closes the current tool round, as the model's next reply would. So it is
 * refused while a generation runs — the generation is the one writing the
 * assistant side — and while a stopped generation's calls are still pending:
 * they would never be offered again. User and system messages do not close
 * a round and stay allowed in both cases.
 */
function checkAssistantAppend(runtime: ConversationRuntime): void {
  if (runtime.generation) throw RpcError.generationInProgress(runtime.generation.id);
  const pending = runtime.storedPendingCalls().map((r) => `"${r.toolCallId}"`);
  if (pending.length > 0) {
    throw RpcError.invalidParam(
      "role",
      `an assistant message would close the tool round whose calls ${pending.join(", ")} are still pending; step (or tool.confirm) to settle them first`,
    );
  }
}

export const queueList: Handlers["queue.list"] = async (_params, _context, runtime) => ({ messages: [...runtime.queue] });

export const queueRemove: Handlers["queue.remove"] = async (params, _context, runtime) => ({ removed: await runtime.removeHeld(params.recordId) });

export const queueClear: Handlers["queue.clear"] = async (_params, _context, runtime) => ({ removed: await runtime.clearHeld() });
