/**
 * Fills a prompt template's placeholders, as Claude Code and OpenCode do:
 * `$ARGUMENTS` is the whole argument text (trimmed); `$1`…`$9` are its
 * words. Words split on whitespace; "double" or 'single' quotes keep spaces
 * inside one word and are removed (a backslash inside double quotes escapes
 * `"` and `\`). A missing word becomes empty. `$10` is `$1` followed by "0".
 * Substitution is one pass: text coming from the arguments is never expanded
 * again. A template with no placeholder at all gets non-empty arguments
 * appended after a blank line, so they are never silently dropped.
 */

export function splitArguments(text: string): string[] {
  const words: string[] = [];
  let current = "";
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (quote === '"' && ch === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\")) current += text[++i];
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}

export function expandCommand(template: string, args: string): string {
  const words = splitArguments(args);
  if (!/\$(ARGUMENTS|[1-9])/.test(template)) return args.trim() === "" ? template : `${template.replace(/\s+$/, "")}\n\n${args.trim()}`;
  return template.replace(/\$(ARGUMENTS|[1-9])/g, (_match, key: string) => (key === "ARGUMENTS" ? args.trim() : (words[Number(key) - 1] ?? "")));
}
