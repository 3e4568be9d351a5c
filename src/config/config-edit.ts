/**
 * Changes made to a configuration file by a command (`agentwire mcp add`,
 * `mcp remove`), the way codex and opencode keep their MCP servers: in the
 * user's own file, so every server started later has them. The file is
 * JSON with comments and the user's: it is edited in place with
 * jsonc-parser's modify/applyEdits, so comments, order and layout survive,
 * and written whole or not at all (a temporary file renamed over it).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { applyEdits, type FormattingOptions, modify, parse, type ParseError, printParseErrorCode } from "jsonc-parser";
import type { McpServerDefinition } from "../../protocol/config-mcp.js";

/** A file that cannot be changed as asked; the message says why and what to do. */
export class ConfigEditError extends Error {}

const FORMAT: FormattingOptions = { insertSpaces: true, tabSize: 2, eol: "\n" };

/** The file's text and its top-level object, or "" and {} when there is no file yet. */
function readJsonc(file: string): { text: string; values: Record<string, unknown> } {
  if (!existsSync(file)) return { text: "", values: {} };
  const text = readFileSync(file, "utf8");
  const errors: ParseError[] = [];
  const values = parse(text, errors, { allowTrailingComma: true, disallowComments: false }) as unknown;
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new ConfigEditError(`${file} is not valid JSON with comments (${printParseErrorCode(first.error)} at offset ${first.offset}); fix it first, it was left as it is`);
  }
  if (text.trim() !== "" && (typeof values !== "object" || values === null || Array.isArray(values))) {
    throw new ConfigEditError(`${file} does not hold a JSON object; fix it first, it was left as it is`);
  }
  return { text, values: (values ?? {}) as Record<string, unknown> };
}

function write(file: string, text: string): void {
  // A new user config directory is the user's alone: configuration found in a directory others can write is not read.
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o600;
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode });
  chmodSync(temporary, mode);
  renameSync(temporary, file);
}

function serversOf(values: Record<string, unknown>): Record<string, unknown> {
  const servers = values.mcpServers;
  return typeof servers === "object" && servers !== null && !Array.isArray(servers) ? (servers as Record<string, unknown>) : {};
}

/** Adds `mcpServers.<name>` to the file (created when missing); refuses a name already there. */
export function addMcpServerToFile(file: string, name: string, server: McpServerDefinition): void {
  const { text, values } = readJsonc(file);
  if (Object.hasOwn(serversOf(values), name)) {
    throw new ConfigEditError(`${file} already has an MCP server named "${name}"; remove it first (agentwire mcp remove ${name}) or pick another name`);
  }
  const base = text.trim() === "" ? "{}\n" : text;
  write(file, applyEdits(base, modify(base, ["mcpServers", name], server, { formattingOptions: FORMAT })));
}

/** Removes `mcpServers.<name>` from the file; false when the file has no such server (then it is not touched). */
export function removeMcpServerFromFile(file: string, name: string): boolean {
  const { text, values } = readJsonc(file);
  if (!Object.hasOwn(serversOf(values), name)) return false;
  write(file, applyEdits(text, modify(text, ["mcpServers", name], undefined, { formattingOptions: FORMAT })));
  return true;
}
