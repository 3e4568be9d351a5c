/**
 * The copy of `agentwire --help` in docs/configuration.md ("Command line"),
 * taken from the help text itself so the two cannot disagree.
 */
import { HELP } from "../cli-help.js";
import type { GeneratedBlock } from "./blocks.js";

export const HELP_BLOCK_PATH = "docs/configuration.md";

export function helpBlock(): GeneratedBlock {
  return { path: HELP_BLOCK_PATH, name: "flags", content: `\`\`\`\n${HELP.trimEnd()}\n\`\`\`\n` };
}
