/**
 * A conversation as Markdown, for reading or pasting elsewhere: a title and
 * metadata, then each message under its role and each tool call with its
 * arguments and result in fenced blocks. Reasoning is kept, folded in a
 * <details> block, so the export loses nothing a reader may want.
 */
import type { Conversation, ConversationRecord } from "../../clients/typescript/index.js";

/** A fence longer than any backtick run inside `text`, so the content cannot close it. */
function fence(text: string, lang = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${text}${text.endsWith("\n") ? "" : "\n"}${ticks}`;
}

const ROLE_HEADINGS = { user: "User", assistant: "Assistant", system: "System" } as const;

export function conversationToMarkdown(conversation: Conversation, records: ConversationRecord[]): string {
  const out: string[] = [];
  out.push(`# ${conversation.title || conversation.id}`, "");
  out.push(`- id: \`${conversation.id}\``);
  out.push(`- created: ${conversation.createdAt}`);
  out.push(`- updated: ${conversation.updatedAt}`);
  if (conversation.model) out.push(`- model: ${conversation.model}`);
  if (conversation.workspace) out.push(`- workspace: \`${conversation.workspace}\``);
  if (conversation.system) out.push("", "System prompt:", "", fence(conversation.system));
  for (const record of records) {
    out.push("");
    if (record.type === "message") {
      const heading = ROLE_HEADINGS[record.role] + (record.notice ? ` (notice: ${record.notice})` : record.interrupted ? " (interrupted)" : "");
      out.push(`## ${heading}`);
      if (record.reasoning) out.push("", "<details><summary>Reasoning</summary>", "", record.reasoning, "", "</details>");
      if (record.content) out.push("", record.content);
      for (const attachment of record.attachments ?? []) {
        if (attachment.type === "file") {
          const range = attachment.lines ? `:${attachment.lines.start}-${attachment.lines.end}` : "";
          out.push("", `Attached \`${attachment.path}${range}\`:`, "", fence(attachment.content));
        } else {
          out.push("", `Attached image ${attachment.name ?? attachment.assetId} (${attachment.mimeType})`);
        }
      }
    } else if (record.type === "reasoning") {
      // The thinking of the assistant message that follows.
      out.push("<details><summary>Reasoning</summary>", "", record.content, "", "</details>");
    } else if (record.type === "compaction") {
      out.push("## Compacted", "", `The model saw this summary instead of everything above (${record.trigger}):`, "", record.summary);
    } else {
      out.push(`### Tool \`${record.toolName}\` — ${record.status}${record.edited ? " (arguments edited)" : ""}`, "");
      out.push(fence(JSON.stringify(record.arguments, null, 2), "json"));
      if (record.result !== null && record.result !== "") out.push("", "Result:", "", fence(record.result));
    }
  }
  return `${out.join("\n")}\n`;
}
