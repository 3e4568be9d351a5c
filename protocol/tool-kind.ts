/**
 * The tool kinds, apart from tools.ts (which re-exports them): the
 * configuration's custom tools name a kind, and the configuration is parsed at
 * every start, whereas tools.ts's other schemas (tools.list, models.list, a
 * call's display) are built when a request first needs them.
 */
import * as z from "zod";

/**
 * What kind of thing a tool call does, so a client can pick an icon and a
 * wording without knowing every tool: ACP's ToolKind names (without
 * switch_mode). One table: ToolKind is its keys.
 */
export const TOOL_KINDS = {
  read: "reads files or data (read_file, list_files).",
  edit: "changes files or content (write_file, edit_file).",
  delete: "removes files or data.",
  move: "moves or renames files.",
  search: "searches for information (search_files, web_search).",
  execute: "runs a command or code (shell, custom commands).",
  think: "internal reasoning or planning (update_plan).",
  fetch: "retrieves external data (web_fetch).",
  other: "anything else, and tools that say nothing about themselves.",
} as const;

type Kind = keyof typeof TOOL_KINDS;

export const ToolKind = z
  .enum(Object.keys(TOOL_KINDS) as [Kind, ...Kind[]])
  .describe(
    `What kind of thing the tool does (ACP's tool kinds): ${Object.entries(TOOL_KINDS)
      .map(([kind, meaning]) => `${kind}: ${meaning}`)
      .join(" ")}`,
  );

export type ToolKind = z.infer<typeof ToolKind>;
