/**
 * The fenced code blocks of a Markdown file, each with the mark that says how
 * test/docs/docs-blocks.test.ts checks it: an HTML comment on the line right above
 * the fence, `<!-- block: KIND options -->`. Options are words (`terminal`)
 * or `key="value"` / `key=value` pairs. A block between
 * `<!-- BEGIN GENERATED: name -->` and its END marker belongs to `npm run gen`
 * and needs no mark.
 */

export interface DocBlock {
  /** Repository-relative path of the Markdown file. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's info string up to the first space: `sh`, `ts`, `text`, or "". */
  lang: string;
  /** The block's text, its indentation removed, ending with a newline (or empty). */
  body: string;
  /** The mark above the fence, or null. */
  mark: BlockMark | null;
  /** The generated block (its marker name) this fence lies in, or null. */
  generated: string | null;
}

export interface BlockMark {
  kind: string;
  /** Bare words after the kind. */
  flags: Set<string>;
  /** key=value options after the kind. */
  options: Map<string, string>;
  /** Everything after the kind, as written (a `shown` block's reason). */
  rest: string;
}

const MARK = /^\s*<!--\s*block:\s*([a-z-]+)(.*?)-->\s*$/;
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/;

export function parseMark(text: string): BlockMark | null {
  const match = MARK.exec(text);
  if (!match) return null;
  const flags = new Set<string>();
  const options = new Map<string, string>();
  for (const part of match[2]!.matchAll(/([A-Za-z-]+)(?:=(?:"([^"]*)"|(\S+)))?/g)) {
    if (part[2] !== undefined || part[3] !== undefined) options.set(part[1]!, part[2] ?? part[3]!);
    else flags.add(part[1]!);
  }
  return { kind: match[1]!, flags, options, rest: match[2]! };
}

/** Every fenced block of `text` in order. Unclosed fences run to the end of the file, as in CommonMark. */
export function extractBlocks(file: string, text: string): DocBlock[] {
  const lines = text.split("\n");
  const blocks: DocBlock[] = [];
  let generated: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const begin = /<!-- BEGIN GENERATED: (\S+) -->/.exec(line);
    if (begin) generated = begin[1]!;
    if (/<!-- END GENERATED: \S+ -->/.test(line)) generated = null;
    const open = FENCE.exec(line);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = new RegExp(`^\\s*${fence![0] === "`" ? "`" : "~"}{${fence!.length},}\\s*$`).exec(lines[j]!);
      if (close) break;
      body.push(lines[j]!.startsWith(indent!) ? lines[j]!.slice(indent!.length) : lines[j]!.trimStart());
    }
    blocks.push({
      file,
      line: i + 1,
      lang: lang!,
      body: body.length > 0 ? `${body.join("\n")}\n` : "",
      mark: i > 0 ? parseMark(lines[i - 1]!) : null,
      generated,
    });
    i = j;
  }
  return blocks;
}

/** `file:line` for messages. */
export const where = (block: DocBlock) => `${block.file}:${block.line}`;
