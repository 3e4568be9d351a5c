/**
 * How a tool and one of its calls are shown to a human: kind, title and the
 * workspace files a call touches. Tools describe themselves (Tool.kind,
 * Tool.title, Tool.describeCall); this module applies the defaults and the
 * bounds, so a tool — or an MCP server — can never send a client an
 * unbounded title, a path outside the workspace's spelling or a crash.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { MAX_TOOL_LOCATIONS, MAX_TOOL_TITLE_CHARS, type ToolCallDisplay, type ToolKind, type ToolLocation } from "../../protocol/index.js";
import type { Tool, ToolAnnotations, ToolCallDescription } from "./tool.js";

/** One line of at most MAX_TOOL_TITLE_CHARS characters (whitespace runs become one space; a cut ends with …). */
export function boundedTitle(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  const chars = [...line];
  if (chars.length <= MAX_TOOL_TITLE_CHARS) return line;
  return `${chars.slice(0, MAX_TOOL_TITLE_CHARS - 1).join("")}…`;
}

/** A path relative to the workspace, / separated ("." for the workspace itself); one outside it keeps its ../ (the tool will refuse it). */
export function workspaceRelative(cwd: string, path: string): string {
  const absolute = isAbsolute(path) ? resolve(path) : resolve(cwd, path);
  const rel = relative(cwd, absolute);
  return rel === "" ? "." : rel.split(sep).join("/");
}

/** Kind and title of a tool, for tools.list. */
export function toolDisplay(tool: Pick<Tool, "name" | "kind" | "title">): { kind: ToolKind; title: string } {
  return { kind: tool.kind ?? "other", title: boundedTitle(tool.title ?? tool.name) || tool.name.slice(0, MAX_TOOL_TITLE_CHARS) };
}

/**
 * Kind, title and locations of one call. `args` are the arguments as
 * proposed (unvalidated); a tool whose describeCall throws or returns
 * nonsense still gets its kind and its own title. An unknown tool is
 * "other", titled by its name.
 */
export function toolCallDisplay(tool: Tool | undefined, toolName: string, args: Readonly<Record<string, unknown>>, cwd: string): ToolCallDisplay {
  const base = toolDisplay(tool ?? { name: toolName });
  let described: ToolCallDescription = {};
  try {
    described = tool?.describeCall?.(args, cwd) ?? {};
  } catch {
    // The arguments are the model's and not yet checked: a description is a courtesy, never a failure.
  }
  const title = typeof described.title === "string" ? boundedTitle(described.title) : "";
  const locations: ToolLocation[] = [];
  for (const location of Array.isArray(described.locations) ? described.locations : []) {
    if (locations.length >= MAX_TOOL_LOCATIONS) break;
    if (typeof location?.path !== "string" || location.path === "" || location.path.includes("\0")) continue;
    const line = location.line;
    locations.push({ path: workspaceRelative(cwd, location.path), ...(Number.isInteger(line) && line! >= 1 ? { line } : {}) });
  }
  return { kind: base.kind, title: title || base.title, locations };
}

/**
 * An MCP tool's kind from its annotations: read-only → read; destructive →
 * delete; otherwise declared not read-only → edit; no annotations → other
 * (MCP's defaults would say "destructive", but a server that says nothing
 * has told us nothing).
 */
export function kindFromAnnotations(annotations: ToolAnnotations | undefined): ToolKind {
  if (annotations?.readOnlyHint === true) return "read";
  if (annotations?.destructiveHint === true) return "delete";
  if (annotations?.readOnlyHint === false || annotations?.destructiveHint === false) return "edit";
  return "other";
}

/** A string argument, or undefined when the model sent something else. */
export function stringArgument(args: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = args[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The description of a call that acts on one path argument: "Edit
 * src/app.ts" with that path as its location; `fallback` (e.g. "." for a
 * listing) when the argument is absent.
 */
export function pathCall(
  verb: string,
  args: Readonly<Record<string, unknown>>,
  cwd: string,
  options: { key?: string; fallback?: string; line?: unknown } = {},
): ToolCallDescription {
  const given = stringArgument(args, options.key ?? "path") ?? options.fallback;
  if (given === undefined || given.includes("\0")) return {};
  const path = workspaceRelative(cwd, given);
  const line = typeof options.line === "number" && Number.isInteger(options.line) && options.line >= 1 ? options.line : undefined;
  return { title: `${verb} ${path}`, locations: [{ path, ...(line !== undefined ? { line } : {}) }] };
}

/** shell: "Run <the command's first line>". */
export function commandCall(command: unknown): ToolCallDescription {
  if (typeof command !== "string" || command.trim() === "") return {};
  const lines = command.trim().split("\n");
  return { title: `Run ${lines[0]!.trim()}${lines.length > 1 ? " …" : ""}` };
}

/** search_files: `Search "pattern" in src`, with the searched path as location. */
export function searchCall(args: Readonly<Record<string, unknown>>, cwd: string): ToolCallDescription {
  const pattern = stringArgument(args, "pattern");
  const where = pathCall("in", args, cwd, { fallback: "." });
  if (pattern === undefined) return { locations: where.locations ?? [] };
  return { title: `Search "${pattern}" ${where.title ?? ""}`.trim(), locations: where.locations ?? [] };
}

/** web_fetch: "Fetch example.com" (the URL's host, or the text as given when it is no URL). */
export function fetchCall(url: unknown): ToolCallDescription {
  if (typeof url !== "string" || url.trim() === "") return {};
  let shown = url.trim();
  try {
    const parsed = new URL(shown);
    if (parsed.host) shown = parsed.host + (parsed.pathname.length > 1 ? parsed.pathname : "");
  } catch {
    // Not a URL: the tool will say so; the title shows what was asked.
  }
  return { title: `Fetch ${shown}` };
}
