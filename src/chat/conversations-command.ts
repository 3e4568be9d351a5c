/**
 * `agentwire conversations list | show ID | rm ID | export ID | rewind ID |
 * unrewind ID | compact ID`: stored conversations, through the protocol (a running server with --url, or an
 * embedded one on the data dir), so the same command works either way.
 */
import type { AgentwireClient, Conversation, ConversationRecord } from "../../clients/typescript/index.js";
import type { ConversationsArgs } from "./chat-options.js";
import { describeError } from "./chat-session.js";
import { ConnectError, connectOrEmbed } from "./connect-or-embed.js";
import { compactAndWait, compactLine, rewindLines } from "./history-actions.js";
import { conversationToMarkdown } from "./markdown-export.js";
import { formatArguments, palette, wantsColor } from "./render.js";

/** Records are fetched a page at a time: a long conversation in one reply could exceed the server's reply limit. */
const RECORDS_PAGE = 200;

async function allRecords(client: AgentwireClient, conversationId: string): Promise<{ conversation: Conversation; records: ConversationRecord[] }> {
  const records: ConversationRecord[] = [];
  for (;;) {
    const page = await client.conversation.get({ conversationId, includeRecords: true, recordsFrom: records.length, recordsLimit: RECORDS_PAGE });
    records.push(...(page.records ?? []));
    if ((page.records ?? []).length < RECORDS_PAGE || records.length >= page.conversation.recordCount) {
      return { conversation: page.conversation, records };
    }
  }
}

async function listAll(client: AgentwireClient, limit: number | undefined): Promise<Conversation[]> {
  const out: Conversation[] = [];
  let cursor: string | undefined;
  do {
    const want = limit === undefined ? 100 : Math.min(100, limit - out.length);
    const page = await client.conversation.list({ limit: want, ...(cursor ? { cursor } : {}) });
    out.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor && (limit === undefined || out.length < limit));
  return out;
}

export async function runConversations(args: ConversationsArgs, stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr): Promise<number> {
  let connection;
  try {
    connection = await connectOrEmbed(args.target, "agentwire-conversations");
  } catch (error) {
    stderr.write(`agentwire: ${error instanceof ConnectError ? error.message : describeError(error)}\n`);
    return 1;
  }
  const { client } = connection;
  const colors = palette(wantsColor(stdout));
  try {
    switch (args.action) {
      case "list": {
        const conversations = await listAll(client, args.limit);
        if (args.json) stdout.write(`${JSON.stringify(conversations, null, 2)}\n`);
        else if (conversations.length === 0) stderr.write("no conversations\n");
        else {
          for (const c of conversations) {
            stdout.write(`${c.id}  ${colors.dim(c.updatedAt)}  ${String(c.recordCount).padStart(4)} records  ${c.title || colors.dim("(untitled)")}\n`);
          }
        }
        break;
      }
      case "show": {
        const { conversation, records } = await allRecords(client, args.id!);
        if (args.json) {
          stdout.write(`${JSON.stringify({ conversation, records }, null, 2)}\n`);
          break;
        }
        stdout.write(`${colors.bold(conversation.title || conversation.id)}  ${colors.dim(conversation.id)}\n`);
        for (const record of records) {
          if (record.type === "message") {
            if (record.reasoning) stdout.write(`${colors.dim(record.reasoning)}\n`);
            stdout.write(`${colors.cyan(`${record.role}:`)} ${record.content}\n`);
          } else if (record.type === "compaction") {
            stdout.write(`${colors.cyan("compacted:")} ${colors.dim(record.summary)}\n`);
          } else if (record.type === "reasoning") {
            stdout.write(`${colors.dim(record.content)}\n`);
          } else {
            stdout.write(`${colors.cyan(`tool ${record.toolName}`)} ${formatArguments(record.arguments)} → ${record.status}\n`);
            if (record.result) stdout.write(`${colors.dim(record.result.length > 2000 ? `${record.result.slice(0, 2000)}…` : record.result)}\n`);
          }
        }
        break;
      }
      case "export": {
        const { conversation, records } = await allRecords(client, args.id!);
        stdout.write(args.format === "markdown" ? conversationToMarkdown(conversation, records) : `${JSON.stringify({ conversation, records }, null, 2)}\n`);
        break;
      }
      case "rm": {
        await client.conversation.delete({ conversationId: args.id! });
        stderr.write(`deleted ${args.id}\n`);
        break;
      }
      case "rewind":
      case "unrewind": {
        const force = args.force ? { force: true } : {};
        const result =
          args.action === "rewind"
            ? await client.conversation.rewind({ conversationId: args.id!, beforeRecordId: args.before!, restoreFiles: args.restoreFiles === true, ...force })
            : await client.conversation.unrewind({ conversationId: args.id!, ...force });
        if (args.json) stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        else for (const line of rewindLines(result)) stderr.write(`${line}\n`);
        break;
      }
      case "compact": {
        const compacted = await compactAndWait(client, args.id!, args.instructions);
        if (!compacted.ok) {
          stderr.write(`agentwire: conversations compact failed: ${compacted.message}\n`);
          return 1;
        }
        if (args.json) stdout.write(`${JSON.stringify(compacted.record, null, 2)}\n`);
        else stderr.write(`${compactLine(compacted.record)}\n`);
        break;
      }
    }
    return 0;
  } catch (error) {
    stderr.write(`agentwire: conversations ${args.action} failed: ${describeError(error)}\n`);
    return 1;
  } finally {
    await connection.close().catch(() => {});
  }
}
