/**
 * The zod schema of the shell tool's arguments: imported when a call's
 * arguments need zod and by `npm run gen`, which writes it as data and JSON
 * Schema (builtin-tool-schemas.ts; shell.ts holds it as builtinParameters).
 */
import * as z from "zod";

// Strict: an unknown key (a misspelt `timeout`, an invented `cwd`) is refused
// with an issue naming it, rather than silently dropped while the model
// believes it took effect.
export const ShellArguments = z.strictObject({
  command: z
    .string()
    .min(1)
    .describe("The shell command line to run, e.g. `ls -la src` or `npm test 2>&1 | tail -n 50`."),
  timeoutMs: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Time limit for this command in milliseconds. Capped by the server's limit; omit to use it."),
});
export type ShellArguments = z.infer<typeof ShellArguments>;
