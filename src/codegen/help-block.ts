/**
 * The copy of the CLI's help in docs/configuration.md ("Command line"):
 * `agentwire --help` and every command's own, taken from the parser itself
 * so the two cannot disagree.
 */
import { helpReference } from "../cli-options.js";
import type { GeneratedBlock } from "./blocks.js";

export const HELP_BLOCK_PATH = "docs/configuration.md";

export function helpBlock(): GeneratedBlock {
  return { path: HELP_BLOCK_PATH, name: "flags", content: `\`\`\`\n${helpReference().trimEnd()}\n\`\`\`\n` };
}
