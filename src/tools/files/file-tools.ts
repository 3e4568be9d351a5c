/** The built-in file tools, in the order they are offered: reading before writing. */
import type { Tool } from "../tool.js";
import { createEditFileTool } from "./edit-file.js";
import { createListFilesTool } from "./list-files.js";
import { createReadFileTool } from "./read-file.js";
import { createSearchFilesTool } from "./search-files.js";
import type { OpenFileOptions } from "./workspace-open.js";
import { createWriteFileTool } from "./write-file.js";

/** `options`: config `tools.files` (hard-linked files are refused unless allowed). */
export function createFileTools(options: OpenFileOptions = { allowHardLinks: false }): Tool[] {
  return [
    createReadFileTool(options),
    createListFilesTool(),
    createSearchFilesTool(options),
    createWriteFileTool(options),
    createEditFileTool(options),
  ];
}
