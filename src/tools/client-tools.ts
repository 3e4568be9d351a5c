/**
 * Client-provided tools (tools.register): tools a connection offers to one
 * conversation's model, and the calls of them waiting for the client's
 * tool.result.
 *
 * How a call reaches the client: `client_tool_call` is sent straight to the
 * registering connection, as a connection-level notification (no seq, not in
 * the conversation's event log), the way server-wide notices are. It is
 * addressed to one connection, not to the conversation's audience: every
 * subscriber already sees the call in tool_pending / tool_executing, and a
 * replayed client_tool_call would ask a reconnecting client to run a call
 * someone else may be running. A seq'd conversation event filtered at
 * delivery would have put one connection's work into everyone's numbering.
 * The registry holds the connection (ClientToolOwner), so the registration
 * lives where the conversation runs (its owner). In cluster mode the
 * registering connection may be on another instance: the forwarded
 * tools.register carries its caller (connection id and client name), and
 * the owner's ClientToolOwner sends through that instance (a forwarded
 * cluster.deliver, src/cluster/cluster-node.ts); that instance tells the
 * owner when the connection closes. The conversation's event bus was the
 * other way: but its events are numbered for every subscriber and kept for
 * replay, which a one-connection request must not be.
 *
 * A call whose connection closes is not failed at once: for graceMs it waits
 * for a connection of the same client (clientInfo.name) to register a tool of
 * that name on the conversation again, which then gets the call. A client
 * that reconnects after a network blip thus finishes what it started.
 */
import {
  MAX_CLIENT_TOOL_CONVERSATIONS,
  MAX_CLIENT_TOOL_SCHEMA_CHARS,
  type ClientToolCallNotification,
  type ClientToolDefinition,
} from "../../protocol/index.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { Tool, ToolResult, ToolRunContext } from "./tool.js";
import { jsonSchemaParameters, type ToolParameters } from "./tool-parameters.js";

/** The connection that registers tools: the registry sends it client_tool_call. */
export interface ClientToolOwner {
  readonly id: string;
  /** clientInfo.name from initialize: a new connection of the same client may take over its calls. */
  readonly clientName: string | undefined;
  /** Send a pre-serialized frame; must never throw. */
  send(frame: string): void;
}

interface Registration {
  owner: ClientToolOwner;
  tools: Map<string, Tool>;
}

interface WaitingCall {
  conversationId: string;
  toolCallId: string;
  name: string;
  notification: ClientToolCallNotification;
  owner: ClientToolOwner;
  /** Set while its connection is gone and the grace period runs. */
  grace?: NodeJS.Timeout;
  finish(result: ToolResult): void;
}

/** Calls answered or given up, remembered per registry so a late tool.result is told so rather than "not found". */
const MAX_FINISHED_REMEMBERED = 1024;

export class ClientToolRegistry {
  /** conversationId → connectionId → its registration. */
  private readonly byConversation = new Map<string, Map<string, Registration>>();
  /** connectionId → conversations it registered tools on. */
  private readonly byConnection = new Map<string, Set<string>>();
  private readonly waiting = new Map<string, WaitingCall>();
  private readonly finished = new Map<string, string>();

  constructor(private readonly graceMs: number) {}

  /**
   * tools.register: replace `owner`'s tools on the conversation. `reserved`
   * says whether a name is the server's (tools.list). Throws INVALID_PARAMS
   * naming the offending tool; nothing changes then.
   */
  register(conversationId: string, owner: ClientToolOwner, definitions: readonly ClientToolDefinition[], reserved: (name: string) => boolean): string[] {
    const others = [...(this.byConversation.get(conversationId)?.values() ?? [])].filter((r) => r.owner.id !== owner.id);
    const tools = new Map<string, Tool>();
    definitions.forEach((definition, i) => {
      const at = `tools[${i}]`;
      const { name } = definition;
      if (tools.has(name)) throw RpcError.invalidParam(`${at}.name`, `"${name}" is registered twice in this call`);
      if (name.startsWith("mcp__")) throw RpcError.invalidParam(`${at}.name`, `"${name}": names starting with mcp__ belong to MCP servers`);
      if (reserved(name)) throw RpcError.invalidParam(`${at}.name`, `"${name}" is already a tool of the server (tools.list); choose another name`);
      if (others.some((r) => r.tools.has(name))) {
        throw RpcError.invalidParam(`${at}.name`, `"${name}" is already registered on this conversation by another connection`);
      }
      tools.set(name, this.toolOf(definition, `${at}.parameters`));
    });
    const mine = this.byConnection.get(owner.id);
    if (tools.size > 0 && !mine?.has(conversationId) && (mine?.size ?? 0) >= MAX_CLIENT_TOOL_CONVERSATIONS) {
      throw RpcError.limitExceeded(
        `this connection provides tools on ${MAX_CLIENT_TOOL_CONVERSATIONS} conversations, the most it may; unregister some (tools: [])`,
        "maxClientToolConversations",
        MAX_CLIENT_TOOL_CONVERSATIONS,
      );
    }
    this.drop(conversationId, owner.id);
    if (tools.size > 0) {
      let registrations = this.byConversation.get(conversationId);
      if (!registrations) this.byConversation.set(conversationId, (registrations = new Map()));
      registrations.set(owner.id, { owner, tools });
      let conversations = this.byConnection.get(owner.id);
      if (!conversations) this.byConnection.set(owner.id, (conversations = new Set()));
      conversations.add(conversationId);
      this.takeOver(conversationId, owner, tools);
    }
    return [...tools.keys()];
  }

  /** The client tools the conversation's model is offered now, every connection's. */
  tools(conversationId: string): Tool[] {
    const registrations = this.byConversation.get(conversationId);
    if (!registrations) return [];
    return [...registrations.values()].flatMap((r) => [...r.tools.values()]);
  }

  tool(conversationId: string, name: string): Tool | undefined {
    for (const registration of this.byConversation.get(conversationId)?.values() ?? []) {
      const tool = registration.tools.get(name);
      if (tool) return tool;
    }
    return undefined;
  }

  /**
   * tool.result. Answers how the call ends; throws when `connectionId` is not
   * the one the call was sent to, TOOL_CALL_NOT_PENDING when it was already
   * answered or given up, and returns undefined when the registry never saw
   * it (the handler then asks the store).
   */
  answer(conversationId: string, toolCallId: string, connectionId: string, output: string, isError: boolean): "completed" | "failed" | undefined {
    const key = callKey(conversationId, toolCallId);
    const call = this.waiting.get(key);
    if (!call) {
      const how = this.finished.get(key);
      if (how) throw RpcError.toolCallNotPending(toolCallId, how);
      return undefined;
    }
    if (call.owner.id !== connectionId || call.grace) {
      throw RpcError.invalidParam(
        "toolCallId",
        `tool call "${toolCallId}" of client tool "${call.name}" was sent to another connection; only the connection that registered the tool may answer it`,
      );
    }
    call.finish({ success: !isError, output });
    this.settle(call, "answered");
    return isError ? "failed" : "completed";
  }

  /** A connection closed: its registrations go, its calls wait graceMs for the same client to come back. */
  closed(connectionId: string): void {
    for (const conversationId of [...(this.byConnection.get(connectionId) ?? [])]) this.drop(conversationId, connectionId);
    for (const call of this.waiting.values()) {
      if (call.owner.id !== connectionId || call.grace) continue;
      const fail = () => {
        call.finish({
          success: false,
          output: `[the client that provided tool "${call.name}" disconnected and did not come back within ${this.graceMs} ms; the call did not complete]`,
        });
        this.settle(call, "failed: its client disconnected");
      };
      if (this.graceMs === 0) fail();
      else call.grace = setTimeout(fail, this.graceMs).unref();
    }
  }

  /** Calls waiting for a client's answer (server.status could show them; tests read it). */
  waitingCount(): number {
    return this.waiting.size;
  }

  private drop(conversationId: string, connectionId: string): void {
    const registrations = this.byConversation.get(conversationId);
    registrations?.delete(connectionId);
    if (registrations?.size === 0) this.byConversation.delete(conversationId);
    const conversations = this.byConnection.get(connectionId);
    conversations?.delete(conversationId);
    if (conversations?.size === 0) this.byConnection.delete(connectionId);
  }

  /** A connection of the same client registered the tool of a call whose connection is gone: the call is its now. */
  private takeOver(conversationId: string, owner: ClientToolOwner, tools: Map<string, Tool>): void {
    if (owner.clientName === undefined) return;
    for (const call of this.waiting.values()) {
      if (!call.grace || call.conversationId !== conversationId || !tools.has(call.name) || call.owner.clientName !== owner.clientName) continue;
      clearTimeout(call.grace);
      call.grace = undefined;
      call.owner = owner;
      owner.send(frameOf({ ...call.notification, timestamp: new Date().toISOString() }));
    }
  }

  private settle(call: WaitingCall, how: string): void {
    if (call.grace) clearTimeout(call.grace);
    const key = callKey(call.conversationId, call.toolCallId);
    this.waiting.delete(key);
    this.finished.set(key, how);
    if (this.finished.size > MAX_FINISHED_REMEMBERED) this.finished.delete(this.finished.keys().next().value!);
  }

  private toolOf(definition: ClientToolDefinition, schemaPath: string): Tool {
    const { inputSchema, parameters } = schemasOf(definition.parameters, schemaPath);
    const readOnly = definition.readOnly === true;
    return {
      name: definition.name,
      description: definition.description,
      parameters,
      inputSchema,
      annotations: readOnly ? { readOnlyHint: true, destructiveHint: false } : { readOnlyHint: false },
      source: "client",
      kind: definition.kind ?? "other",
      ...(definition.title !== undefined ? { title: definition.title } : {}),
      run: (args, context) => this.call(definition.name, args, context),
    };
  }

  /** Run one approved call: send it to the connection providing the tool now, wait for tool.result. */
  private call(name: string, args: Record<string, unknown>, context: ToolRunContext): Promise<ToolResult> {
    const { conversationId, signal } = context;
    const toolCallId = context.toolCallId ?? "";
    if (signal.aborted) return Promise.resolve({ success: false, output: "[interrupted before the call was sent to the client]" });
    const owner = [...(this.byConversation.get(conversationId)?.values() ?? [])].find((r) => r.tools.has(name))?.owner;
    if (!owner) return Promise.resolve({ success: false, output: `[client tool "${name}" is no longer registered: the client that provided it unregistered it or disconnected]` });
    return new Promise<ToolResult>((resolve) => {
      let done = false;
      const notification: ClientToolCallNotification = {
        conversationId,
        timestamp: new Date().toISOString(),
        generationId: context.generationId ?? "",
        toolCallId,
        name,
        arguments: args,
      };
      const timer = setTimeout(() => {
        call.finish({ success: false, output: `[the client did not answer within ${context.timeoutMs} ms (the conversation's toolTimeoutMs)]` });
        this.settle(call, "failed: timed out");
      }, context.timeoutMs).unref();
      const onAbort = () => {
        call.finish({ success: false, output: "[interrupted while waiting for the client's answer]" });
        this.settle(call, "interrupted");
      };
      const call: WaitingCall = {
        conversationId,
        toolCallId,
        name,
        notification,
        owner,
        finish: (result) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          resolve(result);
        },
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.set(callKey(conversationId, toolCallId), call);
      owner.send(frameOf(notification));
    });
  }
}

function callKey(conversationId: string, toolCallId: string): string {
  return `${conversationId}\0${toolCallId}`;
}

function frameOf(params: ClientToolCallNotification): string {
  return JSON.stringify({ jsonrpc: "2.0", method: "client_tool_call", params });
}

/** The schema offered to the model and the check of its arguments, bounded and converted like an MCP tool's. */
function schemasOf(given: Record<string, unknown> | undefined, path: string): { inputSchema: Record<string, unknown>; parameters: ToolParameters<Record<string, unknown>> } {
  const { $schema: _dropped, ...schema } = given ?? { type: "object", properties: {} };
  const size = JSON.stringify(schema).length;
  if (size > MAX_CLIENT_TOOL_SCHEMA_CHARS) {
    throw RpcError.invalidParam(path, `the schema is ${size} characters as JSON; at most ${MAX_CLIENT_TOOL_SCHEMA_CHARS}`);
  }
  if (schema.type !== undefined && schema.type !== "object") {
    throw RpcError.invalidParam(path, `must be an object schema ({"type": "object", "properties": {...}}), got type ${JSON.stringify(schema.type)}`);
  }
  // Some model APIs refuse an object schema without `properties` (a tool that takes no arguments).
  const inputSchema = { type: "object", properties: {}, ...schema };
  return { inputSchema, parameters: jsonSchemaParameters(inputSchema) };
}
