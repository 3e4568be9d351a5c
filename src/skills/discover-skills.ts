/**
 * Finds the skills a conversation may use: folders holding a SKILL.md, in
 * the workspace's `.agentwire/skills/` and in the user's
 * `$XDG_CONFIG_HOME/agentwire/skills/` (or `~/.config/agentwire/skills/`).
 * A workspace skill wins over a user skill of the same name: the project
 * knows its own conventions best.
 *
 * Read fresh on every call (skills.list, load_skill; each model call's
 * `{{skills}}` through skills-cache.ts, which reads again after any change
 * its watches see): a skill added while the server runs is seen at once. Everything is bounded — folders per
 * directory, bytes per SKILL.md, name and description length — and a skill
 * that breaks a rule is reported in `problems`, never fatal.
 */
import type { Dirent } from "node:fs";
import { readdir, realpath } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import type { SkillsListResult } from "../../protocol/skills.js";
import { userConfigPath } from "../config/config-discovery.js";
import { FileToolError } from "../tools/files/file-tool-error.js";
import { openWorkspaceFile, readUpTo } from "../tools/files/workspace-open.js";
import { parseSkillFrontMatter } from "./skill-front-matter.js";

export type SkillSource = "workspace" | "user";
export type DiscoveredSkills = SkillsListResult;
export type DiscoveredSkill = DiscoveredSkills["skills"][number];

export const SKILL_FILE = "SKILL.md";
/** Folders looked at per skills directory; more are reported, not read. */
export const MAX_SKILL_FOLDERS = 200;
/** Largest SKILL.md read (its whole text is what load_skill hands the model). */
export const MAX_SKILL_BYTES = 256 * 1024;
/** A name is what the model passes to load_skill: short, one token, no path characters. */
export const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Every description goes into every system prompt: keep each one short. */
export const MAX_DESCRIPTION_CHARS = 1024;

export interface SkillLookup {
  /** The conversation's workspace (absolute). */
  workspace: string;
  /** For XDG_CONFIG_HOME; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** For ~/.config when XDG_CONFIG_HOME is unset; default the OS home. */
  home?: string;
  signal?: AbortSignal;
}

/** The two directories of a kind (`.agentwire/<kind>` in the workspace, `<user config dir>/<kind>`), workspace first. */
export function agentwireDirectories(lookup: SkillLookup, kind: "skills" | "commands"): { source: SkillSource; dir: string }[] {
  return [
    { source: "workspace", dir: join(lookup.workspace, ".agentwire", kind) },
    { source: "user", dir: join(dirname(userConfigPath({ env: lookup.env ?? process.env, home: lookup.home })), kind) },
  ];
}

/** The two skills directories, workspace first. */
export function skillDirectories(lookup: SkillLookup): { source: SkillSource; dir: string }[] {
  return agentwireDirectories(lookup, "skills");
}

/**
 * Each of `dirs` with its entries, in order; a directory that is missing is
 * skipped, one that cannot be read is a problem (never fatal).
 */
export async function* directoryEntries(
  dirs: { source: SkillSource; dir: string }[],
  problems: { path: string; message: string }[],
  signal: AbortSignal | undefined,
): AsyncGenerator<{ source: SkillSource; dir: string; entries: Dirent[] }> {
  // Read together, not one after the other: every model call of a {{skills}} prompt waits for these
  // reads before its request is sent, and each read is a thread-pool round trip.
  const reads = dirs.map(({ dir }) =>
    readdir(dir, { withFileTypes: true }).then(
      (entries) => ({ entries }),
      (error: NodeJS.ErrnoException) => ({ error }),
    ),
  );
  for (const [i, { source, dir }] of dirs.entries()) {
    signal?.throwIfAborted();
    const read = await reads[i]!;
    if ("error" in read) {
      const code = read.error.code;
      if (code !== "ENOENT" && code !== "ENOTDIR") problems.push({ path: dir, message: `cannot be read (${code ?? String(read.error)})` });
      continue;
    }
    yield { source, dir, entries: read.entries };
  }
}

export async function discoverSkills(lookup: SkillLookup): Promise<DiscoveredSkills> {
  const skills = new Map<string, DiscoveredSkill>();
  const problems: DiscoveredSkills["problems"] = [];
  // Only a workspace skill folder needs it: resolved at the first one (most workspaces have none).
  let workspaceReal: Promise<string> | undefined;
  for await (const { source, dir, entries } of directoryEntries(skillDirectories(lookup), problems, lookup.signal)) {
    const folders = entries
      .filter((e) => !e.name.startsWith(".") && (e.isDirectory() || e.isSymbolicLink()))
      .map((e) => e.name)
      .sort();
    if (folders.length > MAX_SKILL_FOLDERS) {
      problems.push({ path: dir, message: `holds ${folders.length} folders; only the first ${MAX_SKILL_FOLDERS} (by name) are read` });
    }
    const fromHere = new Set<string>();
    for (const folder of folders.slice(0, MAX_SKILL_FOLDERS)) {
      lookup.signal?.throwIfAborted();
      const path = join(dir, folder, SKILL_FILE);
      const insideOf = source === "workspace" ? await (workspaceReal ??= realpath(lookup.workspace).catch(() => lookup.workspace)) : undefined;
      const read = await readSkill(path, insideOf, lookup.signal);
      if (!read.ok) {
        if (read.problem) problems.push({ path, message: read.problem });
        continue;
      }
      if (fromHere.has(read.name)) {
        problems.push({ path, message: `the name "${read.name}" is already used by another skill in ${dir}; this one is ignored` });
        continue;
      }
      fromHere.add(read.name);
      // The workspace directory is read first: its skill keeps the name.
      if (!skills.has(read.name)) skills.set(read.name, { name: read.name, description: read.description, path, source });
    }
  }
  return { skills: [...skills.values()].sort((a, b) => a.name.localeCompare(b.name)), problems };
}

/** Its front matter when the file is a usable skill; `problem` undefined means "not a skill folder at all, say nothing". */
async function readSkill(
  path: string,
  insideOf: string | undefined,
  signal: AbortSignal | undefined,
): Promise<{ ok: true; name: string; description: string } | { ok: false; problem?: string }> {
  const read = await readSkillFile(path, insideOf, signal);
  if (!read.ok) return read;
  const text = read.text;
  const front = parseSkillFrontMatter(text);
  if (!front.ok) return { ok: false, problem: front.problem };
  if (!SKILL_NAME.test(front.name)) {
    return { ok: false, problem: `the name "${front.name.slice(0, 80)}" is not 1–64 letters, digits, ".", "_" or "-" (starting with a letter or digit)` };
  }
  if (front.description.length > MAX_DESCRIPTION_CHARS) {
    return { ok: false, problem: `the description is ${front.description.length} characters, over the ${MAX_DESCRIPTION_CHARS}-character limit` };
  }
  return { ok: true, name: front.name, description: front.description };
}

/** The text of a discovered skill's SKILL.md, checked again as at discovery (it may have changed since). */
export async function readSkillText(skill: DiscoveredSkill, workspace: string, signal?: AbortSignal): Promise<string> {
  const insideOf = skill.source === "workspace" ? await realpath(workspace).catch(() => workspace) : undefined;
  const read = await readSkillFile(skill.path, insideOf, signal);
  if (!read.ok) throw new Error(`${skill.path}: ${read.problem ?? "no longer a skill folder"}`);
  return read.text;
}

/**
 * SKILL.md's text, read the way the file tools read (src/tools/files/workspace-open.ts):
 * its real path is judged (inside the workspace for a workspace skill), then
 * that path is opened without following a symlink or waiting on a FIFO and
 * verified on the descriptor (the same object, a regular file), and at most
 * MAX_SKILL_BYTES are read. A workspace skill with more than one hard link
 * is refused (another name of it may be outside); `tools.files.allowHardLinks`
 * does not reach skill discovery, so it is refused whatever that says.
 */
async function readSkillFile(
  path: string,
  insideOf: string | undefined,
  signal: AbortSignal | undefined,
): Promise<{ ok: true; text: string } | { ok: false; problem?: string }> {
  return readConfinedFile(path, { insideOf, maxBytes: MAX_SKILL_BYTES, label: SKILL_FILE, signal });
}

/**
 * A small text file that is configuration (SKILL.md, a command template), read
 * as readSkillFile describes: confined to `insideOf` when given, no symlink
 * followed at open, no FIFO, at most `maxBytes` (more is cut with a note).
 * `problem` undefined: a symlink to a file where a folder was expected.
 */
export async function readConfinedFile(
  path: string,
  options: { insideOf: string | undefined; maxBytes: number; label: string; signal: AbortSignal | undefined },
): Promise<{ ok: true; text: string } | { ok: false; problem?: string }> {
  const { insideOf, maxBytes, label, signal } = options;
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR") return { ok: false }; // a symlink to a file, not a folder
    return { ok: false, problem: code === "ENOENT" ? `the folder has no ${label}` : `cannot be read (${code})` };
  }
  // A workspace skill is workspace content: a symlink must not make load_skill read files elsewhere.
  if (insideOf !== undefined && !real.startsWith(insideOf + sep)) return { ok: false, problem: `links outside the workspace (to ${real})` };
  let bytes: Buffer;
  try {
    const file = await openWorkspaceFile(real, label, { allowHardLinks: insideOf === undefined });
    try {
      if (file.size > maxBytes) return { ok: false, problem: `${label} is ${file.size} bytes, over the ${maxBytes}-byte limit` };
      bytes = await readUpTo(file.handle, maxBytes + 1, signal);
    } finally {
      await file.close();
    }
  } catch (error) {
    signal?.throwIfAborted();
    if (error instanceof FileToolError) return { ok: false, problem: error.message };
    return { ok: false, problem: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
  // It could have grown since its size was read; the model gets the bounded part.
  const text = bytes.subarray(0, maxBytes).toString("utf8");
  return { ok: true, text: bytes.length > maxBytes ? `${text}\n[${label} cut at ${maxBytes} bytes]` : text };
}
