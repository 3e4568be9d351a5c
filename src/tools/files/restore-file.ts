/**
 * Reading and putting back whole workspace files for conversation.rewind,
 * confined to the workspace exactly as the file tools are (workspace-path.ts
 * resolves, workspace-open.ts opens and verifies).
 */
import { basename, dirname } from "node:path";
import { FileToolError } from "./file-tool-error.js";
import { readOpenText, writeAtomically } from "./text-file.js";
import { openWorkspaceDirectory, openWorkspaceFile, type OpenFileOptions } from "./workspace-open.js";
import { resolveInWorkspace } from "./workspace-path.js";

/** Largest file read back to compare with a checkpoint (as write_file's diff reads). */
const RESTORE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * What is at a workspace path now: its text; null when nothing is there;
 * undefined when something is there that is not a text file we can read
 * (binary, too large, a directory, a hard link when those are refused).
 * A path outside the workspace throws FileToolError.
 */
export async function readWorkspaceText(cwd: string, path: string, options: OpenFileOptions, signal: AbortSignal): Promise<string | null | undefined> {
  const target = await resolveInWorkspace(cwd, path);
  if (!target.exists) return null;
  let file;
  try {
    file = await openWorkspaceFile(target.real, target.display, options);
  } catch (error) {
    if (error instanceof FileToolError) return undefined;
    throw error;
  }
  try {
    return await readOpenText(file, target.display, RESTORE_MAX_BYTES, signal);
  } catch (error) {
    if (error instanceof FileToolError) return undefined;
    throw error;
  } finally {
    await file.close();
  }
}

/**
 * Make the file at `path` hold `content` (atomically, keeping an existing
 * file's permissions, creating missing directories), or remove it when
 * `content` is null. Throws FileToolError saying why it could not.
 */
export async function putWorkspaceText(
  cwd: string,
  path: string,
  content: string | null,
  options: OpenFileOptions,
  signal: AbortSignal,
): Promise<void> {
  const target = await resolveInWorkspace(cwd, path);
  if (content === null) {
    if (!target.exists) return;
    const dir = await openWorkspaceDirectory(dirname(target.real), dirname(target.display));
    try {
      await dir.remove(basename(target.real));
    } finally {
      await dir.close();
    }
    return;
  }
  let mode: number | undefined;
  if (target.exists) {
    const file = await openWorkspaceFile(target.real, target.display, options);
    mode = file.mode;
    await file.close();
  }
  await writeAtomically(target.root, target.real, target.display, content, mode, signal);
}
