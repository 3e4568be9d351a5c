import type { FileAttachment } from "../../protocol/index.js";

/**
 * How a file attachment reads to the model: a tagged block after the message
 * text, naming the file and the lines, so the model can cite them and tell
 * where the file ends and the message goes on.
 *
 *     <file path="src/app.ts" lines="10-20">
 *     …
 *     </file>
 */
export function fileBlock(file: FileAttachment): string {
  const lines = file.lines ? ` lines="${file.lines.start}-${file.lines.end}"` : "";
  const body = file.content === "" || file.content.endsWith("\n") ? file.content : `${file.content}\n`;
  return `<file path="${escapeAttribute(file.path)}"${lines}>\n${body}</file>`;
}

/** The message text followed by its file blocks, each separated by a blank line. */
export function textWithFiles(content: string, files: readonly FileAttachment[]): string {
  if (files.length === 0) return content;
  const blocks = files.map(fileBlock);
  return content === "" ? blocks.join("\n\n") : [content, ...blocks].join("\n\n");
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
