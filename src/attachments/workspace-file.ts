import type { FileHandle } from "node:fs/promises";
import { resolve } from "node:path";
import { FileToolError } from "../tools/files/file-tool-error.js";
import { openWorkspaceFile, readUpTo, type OpenFileOptions, type WorkspaceFile } from "../tools/files/workspace-open.js";
import { resolveInWorkspace } from "../tools/files/workspace-path.js";

/**
 * Reading a workspace text file for an attachment, confined to the
 * workspace by the file tools' own check (src/tools/files/workspace-path.ts)
 * and opened through their primitive (src/tools/files/workspace-open.ts): a
 * path that leaves it — by `..`, as an absolute path elsewhere, through a
 * symlink, or through a directory swapped for one while it is opened — is
 * refused, and so are FIFOs, devices and (unless allowed) hard-linked files.
 */

/** A problem with one attachment, for the param it concerns (`path`, `lines.start`, `lines.end`). */
export class WorkspaceFileError extends Error {
  constructor(
    readonly field: "path" | "lines.start" | "lines.end",
    message: string,
  ) {
    super(message);
    this.name = "WorkspaceFileError";
  }
}

export interface LineSelection {
  start: number;
  end: number;
}

export interface WorkspaceText {
  /** Relative to the workspace, with / separators. */
  path: string;
  content: string;
  /** The lines included (end clamped to the file's last line); absent for the whole file. */
  lines?: LineSelection;
}

/** Bytes looked at for a NUL when deciding a file is binary (as git does, the start of the file). */
const BINARY_SNIFF_BYTES = 8000;
/** A line range is found by reading the file from its start: this far at most. */
export const MAX_SCAN_BYTES = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

/**
 * The file at `requested` (relative to `workspace`, or absolute inside it),
 * confined by the same check as the file tools (resolveInWorkspace), which
 * must find an existing file here.
 */
export async function confineToWorkspace(workspace: string, requested: string): Promise<{ real: string; relative: string }> {
  let found;
  try {
    found = await resolveInWorkspace(resolve(workspace), requested);
  } catch (error) {
    if (error instanceof FileToolError) throw new WorkspaceFileError("path", error.message);
    throw error;
  }
  if (!found.exists) throw new WorkspaceFileError("path", `"${requested}" does not exist in the workspace`);
  return { real: found.real, relative: found.display };
}

/**
 * Reads a UTF-8 text file of the workspace, whole or a line range, refusing
 * binary files and more than `maxBytes` of text. `options`: config
 * `tools.files` (hard-linked files).
 */
export async function readWorkspaceText(
  workspace: string,
  requested: string,
  lines: LineSelection | undefined,
  maxBytes: number,
  options: OpenFileOptions,
): Promise<WorkspaceText> {
  const { real, relative: path } = await confineToWorkspace(workspace, requested);
  let opened: WorkspaceFile;
  try {
    opened = await openWorkspaceFile(real, requested, options);
  } catch (error) {
    if (error instanceof FileToolError) throw new WorkspaceFileError("path", error.message);
    throw new WorkspaceFileError("path", `"${requested}" cannot be opened (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const file = opened.handle;
  try {
    if (!lines) {
      if (opened.size > maxBytes) {
        throw new WorkspaceFileError("path", `"${requested}" is ${opened.size} bytes, over the ${maxBytes}-byte limit of a file attachment; attach a line range`);
      }
      const bytes = await readUpTo(file, maxBytes + 1);
      if (bytes.length > maxBytes) throw new WorkspaceFileError("path", `"${requested}" is over the ${maxBytes}-byte limit of a file attachment`);
      return { path, content: decodeText(bytes, bytes, requested) };
    }
    const { bytes, head, end } = await selectLines(file, lines, maxBytes, requested);
    return { path, content: decodeText(bytes, head, requested), lines: { start: lines.start, end } };
  } finally {
    await opened.close();
  }
}

/** Lines start..end (1-based, inclusive) read from the file's start; `end` is clamped to the last line. */
async function selectLines(
  file: FileHandle,
  range: LineSelection,
  maxBytes: number,
  requested: string,
): Promise<{ bytes: Buffer; head: Buffer; end: number }> {
  const parts: Buffer[] = [];
  let kept = 0;
  let line = 1;
  let lastIncluded = 0;
  let position = 0;
  let head: Buffer | null = null;
  let lastByte = 10;
  const buffer = Buffer.alloc(CHUNK);
  scan: while (true) {
    const { bytesRead } = await file.read(buffer, 0, CHUNK, position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    head ??= Buffer.from(chunk.subarray(0, BINARY_SNIFF_BYTES));
    position += bytesRead;
    lastByte = chunk[chunk.length - 1];
    let at = 0;
    while (at < chunk.length) {
      if (line > range.end) break scan;
      const newline = chunk.indexOf(10, at);
      const stop = newline === -1 ? chunk.length : newline + 1;
      if (line >= range.start) {
        kept += stop - at;
        if (kept > maxBytes) {
          throw new WorkspaceFileError("lines.end", `lines ${range.start}-${range.end} of "${requested}" are over the ${maxBytes}-byte limit of a file attachment`);
        }
        parts.push(Buffer.from(chunk.subarray(at, stop)));
        lastIncluded = line;
      }
      at = stop;
      if (newline !== -1) line++;
    }
    if (position >= MAX_SCAN_BYTES && line <= range.end) {
      throw new WorkspaceFileError("lines.start", `only lines within the first ${MAX_SCAN_BYTES} bytes of a file can be attached`);
    }
  }
  if (lastIncluded === 0) {
    // A last line without its newline is a line all the same.
    const count = line - 1 + (lastByte !== 10 ? 1 : 0);
    throw new WorkspaceFileError("lines.start", `line ${range.start} is past the end of "${requested}" (${count} line${count === 1 ? "" : "s"})`);
  }
  return { bytes: Buffer.concat(parts), head: head ?? Buffer.alloc(0), end: lastIncluded };
}

/** UTF-8 text, or a "binary file" refusal (a NUL near the start, or bytes that are not UTF-8). */
function decodeText(bytes: Buffer, head: Buffer, requested: string): string {
  if (head.subarray(0, BINARY_SNIFF_BYTES).includes(0) || bytes.includes(0)) {
    throw new WorkspaceFileError("path", `"${requested}" is a binary file; only text files can be attached`);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new WorkspaceFileError("path", `"${requested}" is not UTF-8 text; only text files can be attached`);
  }
}
