/**
 * Client-provided tools: a connection offers tools of its own to one
 * conversation's model (`tools.register`); when the model calls one and the
 * call is approved like any other, the registering connection gets
 * `client_tool_call` and answers with `tool.result`. docs/client-tools.md
 * tells the whole story (approval, disconnects, the grace period).
 */
import * as z from "zod";
import { TOOL_NAME_PATTERN } from "./tool-defaults.js";
import { ConversationId, Timestamp } from "./records.js";
import { ToolKind } from "./tools.js";
import { MAX_CLIENT_TOOLS, MAX_CLIENT_TOOL_DESCRIPTION_CHARS, MAX_CLIENT_TOOL_SCHEMA_CHARS, MAX_CLIENT_TOOL_OUTPUT_CHARS } from "./limits/client-tools.js";
export * from "./limits/client-tools.js";

export const ClientToolDefinition = z
  .strictObject({
    name: z
      .string()
      .regex(TOOL_NAME_PATTERN, "letters, digits, _ and -, 1 to 64 characters")
      .describe(
        "Tool name as the model calls it: letters, digits, _ and -, at most 64. Must not be a name tools.list already holds (built-in, custom, web or MCP tools, and never mcp__…), nor a tool another connection registered on the conversation.",
      ),
    description: z
      .string()
      .min(1)
      .max(MAX_CLIENT_TOOL_DESCRIPTION_CHARS)
      .describe(`What the tool does, as told to the model (at most ${MAX_CLIENT_TOOL_DESCRIPTION_CHARS} characters).`),
    parameters: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        `JSON Schema of the arguments: an object schema ({"type": "object", "properties": {...}, "required": [...]}), at most ${MAX_CLIENT_TOOL_SCHEMA_CHARS} characters as JSON. Offered to the model as it is and used to check its calls, as for MCP tools (a schema the server cannot convert lets any object through, and the client checks). Default: no arguments.`,
      ),
    kind: ToolKind.optional().describe("What kind of thing the tool does, for clients to render its calls. Default other."),
    title: z.string().max(120).optional().describe("A short human name of the tool. Default: its name."),
    readOnly: z
      .boolean()
      .optional()
      .describe("The tool changes nothing (readOnlyHint): the auto-read-only approval policy runs it without asking. Default false."),
  })
  .describe("A tool a client offers to a conversation's model.");

export const ToolsRegisterParams = z
  .strictObject({
    conversationId: ConversationId,
    tools: z
      .array(ClientToolDefinition)
      .max(MAX_CLIENT_TOOLS)
      .describe(
        `The connection's tools for this conversation (at most ${MAX_CLIENT_TOOLS}); they replace what this connection registered on it before. [] unregisters them all.`,
      ),
  })
  .describe("Offer tools of this connection to the conversation's model.");

export const ToolsRegisterResult = z
  .object({ tools: z.array(z.string()).describe("The names this connection now provides on the conversation.") })
  .describe("Result of tools.register.");

export const ToolResultParams = z
  .strictObject({
    conversationId: ConversationId,
    toolCallId: z.string().min(1).describe("The call being answered (client_tool_call's toolCallId)."),
    output: z
      .string()
      .max(MAX_CLIENT_TOOL_OUTPUT_CHARS)
      .describe(`What the tool produced, as the model will read it (at most ${MAX_CLIENT_TOOL_OUTPUT_CHARS} characters).`),
    isError: z.boolean().optional().describe("The tool failed: the call ends as tool_failed and the model reads output as the reason. Default false."),
  })
  .describe("Answer a client_tool_call.");

export const ToolResultResult = z
  .object({ status: z.enum(["completed", "failed"]).describe("How the call ends: completed, or failed (isError).") })
  .describe("Result of tool.result.");

export const ClientToolCallNotification = z
  .object({
    conversationId: ConversationId,
    timestamp: Timestamp.describe("When the server sent it."),
    generationId: z.string().describe("The generation the call belongs to."),
    toolCallId: z.string().describe("The call to answer with tool.result."),
    name: z.string().describe("The client tool the model called."),
    arguments: z.record(z.string(), z.unknown()).describe("The arguments, checked against the tool's parameters (as edited by tool.confirm, if they were)."),
  })
  .describe(
    "Run a client tool: sent only to the connection that registered it, when an approved call of it starts running (after tool_executing). Not a conversation event: it carries no seq and is not replayed; a connection that takes the call over by registering the tool again gets it anew.",
  );

export type ClientToolDefinition = z.infer<typeof ClientToolDefinition>;
export type ClientToolCallNotification = z.infer<typeof ClientToolCallNotification>;
