/**
 * Matching a model's regular expression against a file's lines without
 * letting it hang the server. A JS RegExp runs synchronously on the event
 * loop, and a pattern like `(a+)+$` can backtrack for minutes on one line:
 * no signal or timer could stop it. V8 can interrupt a script run through
 * `vm` with a `timeout`, regular expression included, so the per-file match
 * loop runs there with a time limit.
 */
import vm from "node:vm";

export interface LineMatch {
  /** 1-based. */
  line: number;
  /** The line's text, cut to `maxChars` (no line break). */
  text: string;
  /** The line's full length in characters. */
  length: number;
}

/** The script sees `text`, `re`, `max`, `maxChars` as globals of its own context and returns the matches. */
const MATCH_SCRIPT = new vm.Script(`(() => {
  const found = [];
  let start = 0;
  let line = 0;
  while (start < text.length && found.length < max) {
    let end = text.indexOf("\\n", start);
    if (end === -1) end = text.length;
    line++;
    let content = text.slice(start, end);
    if (content.endsWith("\\r")) content = content.slice(0, -1);
    if (re.test(content)) found.push({ line, text: content.slice(0, maxChars), length: content.length });
    if (end === text.length) break;
    start = end + 1;
  }
  return found;
})()`);

/** Thrown when one file's matching ran over its time. */
export class RegexTimeout extends Error {}

export class RegexLines {
  private readonly context = vm.createContext({ text: "", re: /$^/, max: 0, maxChars: 0 });

  constructor(
    private readonly re: RegExp,
    private readonly maxChars: number,
  ) {}

  /** Up to `max` matching lines of `text`, in order; throws RegexTimeout past `timeoutMs`. */
  match(text: string, max: number, timeoutMs: number): LineMatch[] {
    Object.assign(this.context, { text, re: this.re, max, maxChars: this.maxChars });
    try {
      return MATCH_SCRIPT.runInContext(this.context, { timeout: Math.max(1, Math.floor(timeoutMs)) }) as LineMatch[];
    } catch (error) {
      if ((error as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") throw new RegexTimeout();
      throw error;
    } finally {
      this.context.text = ""; // do not keep the file alive
    }
  }
}
