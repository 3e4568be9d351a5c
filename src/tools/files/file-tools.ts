/** The built-in file tools, in the order they are offered: reading before writing. */
import type { Tool } from "../tool.js";
import { createEditFileTool } from "./edit-file.js";
import { createListFilesTool } from "./list-files.js";
import { createReadFileTool } from "./read-file.js";
import { createSearchFilesTool } from "./search-files.js";
import { createWriteFileTool } from "./write-file.js";

export function createFileTools(): Tool[] {
  return [
    createReadFileTool(),
    createListFilesTool(),
    createSearchFilesTool(),
    createWriteFileTool(),
    createEditFileTool(),
  ];
}
