import * as z from "zod";
import { CommandName, ConversationId } from "./records.js";
export * from "./limits/commands.js";

/** Longest `arguments` string of message.append { command }. */
export const MAX_COMMAND_ARGUMENTS_CHARS = 16 * 1024;

export const CommandsListParams = z
  .strictObject({
    conversationId: ConversationId.optional().describe(
      "Look in this conversation's workspace. Absent (and no workspace): the server's working directory.",
    ),
    workspace: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe("An absolute directory to look in instead, before a conversation exists. Not together with conversationId."),
  })
  .describe("Parameters of commands.list.");

export const Command = z
  .object({
    name: CommandName,
    description: z.string().describe("Front matter `description`; empty when the file has none."),
    argumentHint: z.string().optional().describe("Front matter `argument-hint`: what to type after the name, e.g. \"<issue> [priority]\"."),
    mode: z
      .string()
      .optional()
      .describe(
        "Front matter `mode`: message.append { command } switches the conversation to this mode (settings.mode, with conversation_updated) before its message is stored, so the step that answers runs in it, and the conversation stays in it. A mode the server does not have is refused (INVALID_PARAMS on `command`), as is a workspace command naming a mode whose approval is auto (only the user's own commands may).",
      ),
    model: z
      .string()
      .optional()
      .describe("Front matter `model`: listed, not applied by the server (the message runs with the conversation's model); a client that honours it passes it as `step { model }` for the step it starts."),
    path: z.string().describe("Absolute path of the template file."),
    source: z
      .enum(["workspace", "user"])
      .describe(
        "workspace: <workspace>/.agentwire/commands/<name>.md; user: $XDG_CONFIG_HOME/agentwire/commands/<name>.md (or ~/.config/agentwire/commands/). A workspace command hides a user command of the same name.",
      ),
  })
  .describe("A prompt template: message.append { command: name, arguments } sends its text with the arguments filled in.");

export const CommandProblem = z
  .object({
    path: z.string().describe("The template file (or commands directory) concerned."),
    message: z.string().describe("What is wrong, e.g. a bad name, unclosed front matter, too large, unreadable."),
  })
  .describe("A template that could not be used; the others still are.");

export const CommandsListResult = z
  .object({
    commands: z.array(Command).describe("Usable commands, by name."),
    problems: z.array(CommandProblem).describe("Files that were skipped, and why. Empty when all is well."),
  })
  .describe("Result of commands.list.");

export type Command = z.infer<typeof Command>;
export type CommandsListResult = z.infer<typeof CommandsListResult>;
