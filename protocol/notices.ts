/**
 * Notices: something a client should show its user that is neither an error
 * nor the end of anything. Today they are server-wide and say what the server
 * left out when it started (a configuration file it did not trust, or did not
 * read); `initialize` and `server.status` carry them. The shape `{ code,
 * message }` is the payload a conversation-scoped `notice` will carry too.
 */
import * as z from "zod";

/** Every notice code, with what it means. One table: NoticeCode is its keys. */
export const NOTICE_CODES = {
  config_untrusted:
    "A project agentwire.json sets keys that run commands or send credentials (MCP servers, custom tools, endpoints, key names, approval settings…), and the user has not trusted it as it is now: the server started without those keys. `agentwire trust DIR` applies them; a later change to the file asks again.",
  config_ignored:
    "An agentwire.json was not read at all: its directory or the file itself is not owned by the user running the server, or is writable by its group or by others.",
  data_dir_not_used:
    "The working directory holds a `.agentwire` data dir (where older versions kept conversations) that is not the data dir in use: its conversations are not shown. `--data-dir .agentwire` uses it; nothing is moved.",
} as const;

type Code = keyof typeof NOTICE_CODES;

export const NoticeCode = z
  .enum(Object.keys(NOTICE_CODES) as [Code, ...Code[]])
  .describe(
    `What the notice is about: ${Object.entries(NOTICE_CODES)
      .map(([code, meaning]) => `${code}: ${meaning}`)
      .join(" ")}`,
  );

export const Notice = z
  .object({
    code: NoticeCode,
    message: z.string().describe("One or two sentences for the user: what happened and what to do about it."),
  })
  .describe("A notice to show the user; it ends nothing.");

export type NoticeCode = z.infer<typeof NoticeCode>;
export type Notice = z.infer<typeof Notice>;
