/**
 * The copy of the CLI's help in docs/configuration.md ("Command line"):
 * `agentwire --help` and `agentwire serve --help` (every configuration
 * flag, the environment, the configuration files), taken from the parser
 * itself so the two cannot disagree. docs/cli.md has the other commands.
 */
import { helpReference } from "../cli-options.js";
import type { GeneratedBlock } from "./blocks.js";

export const HELP_BLOCK_PATH = "docs/configuration.md";

export function helpBlock(): GeneratedBlock {
  return { path: HELP_BLOCK_PATH, name: "flags", content: `\`\`\`\n${helpReference([[], ["serve"]]).trimEnd()}\n\`\`\`\n` };
}
