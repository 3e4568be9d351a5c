/**
 * JSDoc blocks for the generated TypeScript: the text an editor shows on hover.
 */
import { wrapParagraphs } from "./wrap-paragraphs.js";

const WIDTH = 100;

/**
 * A JSDoc block at `indent`. Each paragraph is wrapped to WIDTH on its own; ""
 * separates paragraphs with a blank line; paragraphs are never joined, so a
 * tag ("@default 50") stays on its own line. Lines from a "```" line to the
 * next are code and kept verbatim. A single short line stays on one line, as
 * people write it.
 */
export function docComment(paragraphs: readonly string[], indent: string): string[] {
  // "*/" would end the comment early; "*\/" reads the same in an editor.
  const lines = wrapParagraphs(paragraphs, WIDTH - indent.length - 3, (text) => text.replaceAll("*/", "*\\/"));
  if (lines.length === 0) return [];
  if (lines.length === 1 && indent.length + lines[0].length + 7 <= WIDTH) return [`${indent}/** ${lines[0]} */`];
  return [`${indent}/**`, ...lines.map((l) => (l ? `${indent} * ${l}` : `${indent} *`)), `${indent} */`];
}

/** The first sentence of a description: up to the first ". " that starts a new sentence, or all of it. */
export function firstSentence(text: string): string {
  const match = /^(.*?[.!?])\s+(?=[A-Z`"(])/s.exec(text);
  return (match ? match[1] : text).trim();
}
