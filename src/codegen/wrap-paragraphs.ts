/**
 * Doc text as lines for a generated comment (JSDoc) or docstring (Python):
 * each paragraph wrapped at `max` columns, "" kept as a blank line, lines
 * from a ``` line to the next kept verbatim as code, trailing blank lines
 * dropped. `escape` makes a line safe inside the target's comment syntax.
 */
export function wrapParagraphs(paragraphs: readonly string[], max: number, escape: (text: string) => string): string[] {
  const lines: string[] = [];
  let inCode = false;
  for (const raw of paragraphs) {
    const paragraph = escape(raw);
    if (paragraph.startsWith("```")) inCode = !inCode;
    if (inCode || paragraph.startsWith("```") || paragraph === "") {
      lines.push(paragraph);
      continue;
    }
    let line = "";
    for (const word of paragraph.split(/\s+/)) {
      if (line && line.length + 1 + word.length > max) {
        lines.push(line);
        line = word;
      } else {
        line = line ? `${line} ${word}` : word;
      }
    }
    lines.push(line);
  }
  while (lines.at(-1) === "") lines.pop();
  return lines;
}
