/**
 * The README's copy of `agentwire --help`, taken from the help text itself so
 * the two cannot disagree.
 */
import { HELP } from "../cli-help.js";
import type { GeneratedBlock } from "./blocks.js";

export function readmeFlagsBlock(): GeneratedBlock {
  return { path: "README.md", name: "flags", content: `\`\`\`\n${HELP.trimEnd()}\n\`\`\`\n` };
}
