import { readFile, truncate } from "node:fs/promises";
import { asStoreFileError, errorCode, isTransientIoError } from "./store-file-error.js";

/** A journal's whole lines, or that it is missing, or why it cannot be read. */
export type JournalLines = { ok: true; lines: string[] | null; bytes: number } | { ok: false; problem: string };

/**
 * Reads a journal file (`name` names it in a problem) as its whole lines. A
 * last line without its newline is what a crash mid-append leaves: the file
 * is truncated to the lines before it, and the piece is not returned. A
 * missing file is `lines: null`; one that cannot be read for good a problem,
 * for the caller to treat as damage (a transient failure throws StoreFileError).
 */
export async function readJournalLines(path: string, name: string): Promise<JournalLines> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { ok: true, lines: null, bytes: 0 };
    if (isTransientIoError(error)) throw asStoreFileError(error, path, "cannot be read");
    return { ok: false, problem: `${name} cannot be read (${errorCode(error) ?? "unknown error"})` };
  }
  const end = text.lastIndexOf("\n") + 1;
  const bytes = Buffer.byteLength(text.slice(0, end));
  if (end < text.length) {
    try {
      await truncate(path, bytes);
    } catch (error) {
      throw asStoreFileError(error, path, "could not be written");
    }
  }
  const lines = text.slice(0, end).split("\n");
  lines.pop();
  return { ok: true, lines, bytes };
}
