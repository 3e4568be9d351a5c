/**
 * read_file: a text file with numbered lines, a window at a time. The file
 * is read in chunks and only the requested window is kept, so a huge file (or
 * one enormous line) costs the window's memory, not the file's.
 */
import type { FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import type { Tool } from "../tool.js";
import { builtinParameters } from "../tool-parameters.js";
import type { ReadFileArguments } from "./file-tool-arguments.js";
import { FileToolError } from "./file-tool-error.js";
import { runFileTool, throwIfStopped } from "./file-tool-run.js";
import { binaryRefusal, looksBinary, readSample } from "./text-file.js";
import { openWorkspaceFile, type OpenFileOptions } from "./workspace-open.js";
import { resolveInWorkspace } from "./workspace-path.js";
import { pathCall } from "../tool-display.js";
import { READ_MAX_BYTES, READ_MAX_LINE_CHARS, READ_MAX_LINES } from "./read-file-limits.js";

export { READ_MAX_BYTES, READ_MAX_LINE_CHARS, READ_MAX_LINES };

const CHUNK_BYTES = 64 * 1024;

export function createReadFileTool(options: OpenFileOptions): Tool<ReadFileArguments> {
  return {
    name: "read_file",
    description:
      "Read a text file from the workspace. Lines come numbered like `cat -n` (the number, a tab, the line). " +
      `At most ${READ_MAX_LINES} lines or ${READ_MAX_BYTES / 1024} KiB per call and ${READ_MAX_LINE_CHARS} characters per line; ` +
      "a note at the end says where to continue with `offset`. Binary files are refused.",
    parameters: builtinParameters("read_file", async () => (await import("./file-tool-arguments.js")).ReadFileArguments),
    annotations: { readOnlyHint: true, destructiveHint: false },
    source: "builtin",
    kind: "read",
    title: "Read file",
    describeCall: (args, cwd) => pathCall("Read", args, cwd, { line: args.offset }),
    run: (args, context) =>
      runFileTool(context, { readOnly: true }, async (signal) => {
        const target = await resolveInWorkspace(context.cwd, args.path);
        if (!target.exists) throw new FileToolError(`"${target.display}" does not exist`);
        const file = await openWorkspaceFile(target.real, target.display, options);
        try {
          const { sample, truncated } = await readSample(file.handle);
          if (looksBinary(sample, truncated)) throw binaryRefusal(target.display, file.size);
          const output = await readWindow(file.handle, target.display, args.offset ?? 1, args.limit ?? READ_MAX_LINES, signal);
          return { success: true, output };
        } finally {
          await file.close();
        }
      }),
  };
}

async function readWindow(handle: FileHandle, display: string, offset: number, limit: number, signal: AbortSignal): Promise<string> {
  const out: string[] = [];
  let outBytes = 0;
  let lineNo = 0;
  let cutLines = false;
  let stop: "limit" | "bytes" | null = null;
  for await (const line of lines(handle, signal)) {
    lineNo++;
    if (lineNo < offset) continue;
    if (out.length === limit) {
      stop = "limit";
      break;
    }
    let text = line.text;
    if (line.length > READ_MAX_LINE_CHARS) {
      text = `${text.slice(0, READ_MAX_LINE_CHARS)}… [line cut: ${line.length} characters]`;
      cutLines = true;
    }
    const numbered = `${String(lineNo).padStart(6)}\t${text}`;
    const bytes = Buffer.byteLength(numbered, "utf8") + 1;
    if (outBytes + bytes > READ_MAX_BYTES && out.length > 0) {
      stop = "bytes";
      break;
    }
    out.push(numbered);
    outBytes += bytes;
  }
  if (out.length === 0) {
    if (lineNo === 0) return `[${display} is empty]`;
    throw new FileToolError(`offset ${offset} is past the end of "${display}", which has ${lineNo} lines`);
  }
  const last = offset + out.length - 1;
  const notes: string[] = [];
  if (stop === "limit") {
    notes.push(`[showing lines ${offset}-${last}; ${display} continues: call read_file with offset ${last + 1} to read on]`);
  } else if (stop === "bytes") {
    notes.push(`[output cut at ${READ_MAX_BYTES / 1024} KiB after line ${last}; call read_file with offset ${last + 1} to read on]`);
  }
  if (cutLines) notes.push(`[lines longer than ${READ_MAX_LINE_CHARS} characters are cut]`);
  return [...out, ...notes].join("\n");
}

interface Line {
  /** The line's first READ_MAX_LINE_CHARS + 1 characters at most (no line break). */
  text: string;
  /** Its full length in characters. */
  length: number;
}

/** The file's lines (split at \n, a trailing \r dropped), each kept only up to the cap. */
async function* lines(handle: FileHandle, signal: AbortSignal): AsyncGenerator<Line> {
  const decoder = new StringDecoder("utf8");
  const buffer = Buffer.alloc(CHUNK_BYTES);
  let position = 0;
  let current = "";
  let length = 0;
  let endsWithCr = false;
  const keep = READ_MAX_LINE_CHARS + 1;
  const add = (piece: string) => {
    if (piece === "") return;
    if (current.length < keep) current += piece.slice(0, keep - current.length);
    length += piece.length;
    endsWithCr = piece.endsWith("\r");
  };
  const finish = (): Line => {
    // A CRLF file's \r belongs to the line break, not the line.
    const whole = current.length === length;
    const line = endsWithCr
      ? { text: whole ? current.slice(0, -1) : current, length: length - 1 }
      : { text: current, length };
    current = "";
    length = 0;
    endsWithCr = false;
    return line;
  };
  for (;;) {
    throwIfStopped(signal);
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const text = decoder.write(buffer.subarray(0, bytesRead));
    let from = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", from)) {
      add(text.slice(from, newline));
      from = newline + 1;
      yield finish();
    }
    add(text.slice(from));
  }
  add(decoder.end());
  if (length > 0) yield finish();
}
