/**
 * What a configuration key declares beside its type, description and
 * `.default()`: the command-line flag and the environment variable that
 * set it, and a default that is not one fixed value. Declared with zod's
 * `.meta()` on the key itself (protocol/config*.ts), so a key is written
 * once; `--help`, the editor schema (protocol/config.schema.json), the
 * environment layer, `agentwire config` and docs/reference/config.md all
 * read it from there (src/config/config-key-walk.ts walks the schema, and
 * `npm run gen` writes what it finds into src/config/config-table.ts).
 */
import "zod";

export interface ConfigKeyMeta {
  /**
   * The flag of `agentwire serve` and `agentwire config` that sets the key,
   * with the name of its argument as `--help` shows it: "--port PORT". The
   * flag takes the key's type: an integer within the key's bounds, a string,
   * one of an enum's values, or a list (the flag repeatable, each value
   * comma-separated).
   */
  flag?: `--${string} ${string}`;
  /** The environment variable that sets the key (a list: comma-separated). */
  env?: string;
  /**
   * The default in words, for a key whose default is not one value the
   * schema can hold ("the conversation's toolTimeoutMs"), or whose value is
   * too long to show in a table (the built-in system prompt template).
   */
  defaultText?: string;
  /** Words after the default value: "or fewer when the open-file limit is lower". */
  defaultNote?: string;
}

declare module "zod" {
  // zod's documented way to type `.meta()`: merge into its GlobalMeta.
  interface GlobalMeta extends ConfigKeyMeta {}
}

/** The meta keys above, which are not JSON Schema: the editor schema leaves them out. */
export const CONFIG_META_KEYS: readonly (keyof ConfigKeyMeta)[] = ["flag", "env", "defaultText", "defaultNote"];
