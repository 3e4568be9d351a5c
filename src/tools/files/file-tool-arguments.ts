/**
 * The zod schemas of the file tools' arguments (read_file, write_file,
 * edit_file, list_files, search_files). Imported when a call's arguments
 * need zod (the data cannot decide them, or refuses them and zod words why)
 * and by `npm run gen`, which writes them as data and JSON Schema
 * (builtin-tool-schemas.ts): the tools' own modules hold them as
 * builtinParameters (tool-parameters.ts) and load no zod.
 */
import * as z from "zod";
import { READ_MAX_LINES } from "./read-file-limits.js";

export const ReadFileArguments = z.strictObject({
  path: z.string().min(1).describe("The file to read, relative to the workspace (or absolute, inside it)."),
  offset: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("First line to return, counting from 1. Default 1. Use it to read on where a previous call stopped."),
  limit: z
    .number()
    .int()
    .positive()
    .max(READ_MAX_LINES)
    .optional()
    .describe(`Most lines to return. Default and maximum ${READ_MAX_LINES}.`),
});
export type ReadFileArguments = z.infer<typeof ReadFileArguments>;

export const WriteFileArguments = z.strictObject({
  path: z.string().min(1).describe("The file to write, relative to the workspace (or absolute, inside it). Missing parent directories are created."),
  content: z.string().describe("The file's complete new content (UTF-8 text). It replaces everything the file held."),
});
export type WriteFileArguments = z.infer<typeof WriteFileArguments>;

export const EditFileArguments = z.strictObject({
  path: z.string().min(1).describe("The file to edit, relative to the workspace (or absolute, inside it). It must exist."),
  old_string: z
    .string()
    .min(1)
    .describe("The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true: include enough surrounding lines to make it unique."),
  new_string: z.string().describe("The text to put in its place (may be empty, to delete old_string)."),
  replace_all: z.boolean().optional().describe("Replace every occurrence of old_string instead of requiring exactly one. Default false."),
});
export type EditFileArguments = z.infer<typeof EditFileArguments>;

export const ListFilesArguments = z.strictObject({
  path: z.string().min(1).optional().describe("Directory to list, relative to the workspace (or absolute, inside it). Default: the workspace itself."),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe("Only list files whose path relative to `path` matches this glob, e.g. `**/*.ts` or `src/*.{js,json}`. Without it every file and directory is listed."),
});
export type ListFilesArguments = z.infer<typeof ListFilesArguments>;

export const SearchFilesArguments = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe("A JavaScript regular expression, matched against each line, e.g. `function\\s+main` or `TODO|FIXME`. No slashes or flags around it."),
  path: z
    .string()
    .min(1)
    .optional()
    .describe("Directory (searched recursively) or single file to search, relative to the workspace (or absolute, inside it). Default: the workspace."),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe("Only search files whose path relative to `path` matches this glob, e.g. `**/*.ts`."),
  case_insensitive: z.boolean().optional().describe("Match letters regardless of case. Default false."),
});
export type SearchFilesArguments = z.infer<typeof SearchFilesArguments>;
