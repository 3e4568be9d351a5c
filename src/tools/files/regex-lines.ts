/**
 * The lines of some texts that a model's regular expression matches, for
 * search_files. A JS RegExp runs synchronously, and a pattern like `(a+)+$`
 * can backtrack for hours on one line, so this runs as an offload job (see
 * ../offload/deadline-workers.ts): in a worker thread, never on the
 * server's main thread.
 *
 * Within the job, each text is matched through `vm` with a timeout (V8 can
 * interrupt a script there, in a regular expression too) set to what is
 * left of the call's budget: the job then stops at the text where the
 * budget ran out and says which, keeping the matches before it. The
 * worker's own deadline, a little later, is the hard limit behind that.
 */
import vm from "node:vm";
import { monotonicMs } from "../../monotonic-ms.js";

export interface LineMatchesInput {
  /** The pattern's source and flags, compiled here (and kept for the next job of the same search). */
  source: string;
  flags: string;
  /** The texts (one per file), matched in order. */
  texts: string[];
  /** Most matches returned, all texts together. */
  max: number;
  /** Characters kept of a matching line. */
  maxChars: number;
  /** Time the matching may take, all texts together. */
  budgetMs: number;
}

export interface LineMatch {
  /** 1-based. */
  line: number;
  /** The line's text, cut to `maxChars` (no line break). */
  text: string;
  /** The line's full length in characters. */
  length: number;
}

export interface LineMatches {
  /** Per text, in order: its matching lines (up to `max` in all). Texts from `stoppedAt` on have none. */
  matches: LineMatch[][];
  /** The text the budget ran out in (not fully searched), or null when every text was. */
  stoppedAt: number | null;
  /** Time the matching took, to count against the call's budget. */
  elapsedMs: number;
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

const context = vm.createContext({ text: "", re: /$^/, max: 0, maxChars: 0 });
/** The last pattern compiled, by the source and flags it was given (RegExp#source is normalized, so it is no key). */
let compiled: { source: string; flags: string; re: RegExp } | undefined;

export function matchLines({ source, flags, texts, max, maxChars, budgetMs }: LineMatchesInput): LineMatches {
  if (compiled?.source !== source || compiled.flags !== flags) compiled = { source, flags, re: new RegExp(source, flags) };
  const started = monotonicMs();
  const elapsed = () => monotonicMs() - started;
  const matches: LineMatch[][] = [];
  let left = max;
  try {
    for (let i = 0; i < texts.length; i++) {
      const timeout = Math.floor(budgetMs - elapsed());
      if (timeout < 1) return { matches, stoppedAt: i, elapsedMs: elapsed() };
      Object.assign(context, { text: texts[i], re: compiled.re, max: left, maxChars });
      let found: LineMatch[];
      try {
        found = left > 0 ? (MATCH_SCRIPT.runInContext(context, { timeout }) as LineMatch[]) : [];
      } catch (error) {
        if ((error as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") return { matches, stoppedAt: i, elapsedMs: elapsed() };
        throw error;
      }
      matches.push(found);
      left -= found.length;
    }
    return { matches, stoppedAt: null, elapsedMs: elapsed() };
  } finally {
    context.text = ""; // do not keep the last file alive between jobs
  }
}
