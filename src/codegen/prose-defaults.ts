/**
 * A config key's default as its description states it ("Default 10000.",
 * "(default 127.0.0.1)", "lowdb (default; …)", "Default: the
 * conversation's."), for keys whose schema declares no `.default()`. Only
 * the config reference reads it; once every key declares its default in
 * the schema this file has nothing left to do and can go.
 */

export type ProseDefault =
  /** A value: `10000`, `"agentwire:"`, `false`, `127.0.0.1`. */
  | { kind: "value"; text: string }
  /** Words where no single value applies: "the conversation's toolTimeoutMs". */
  | { kind: "phrase"; text: string };

/** A JSON-like literal: number, quoted string, true/false/null, {} or []. */
const LITERAL = String.raw`-?\d+(?:\.\d+)?|"[^"]*"|true|false|null|\{\}|\[\]`;

const PATTERNS: readonly { pattern: RegExp; kind: ProseDefault["kind"] }[] = [
  // "Default 10000.", "Default false: they are refused", "Default {} (no overrides)."
  // The literal must end its word: "127.0" of "(default 127.0.0.1)" is not one.
  { pattern: new RegExp(String.raw`\b[Dd]efault (${LITERAL})(?=[.,;:)]*(?:\s|$))`), kind: "value" },
  // "(default 127.0.0.1)", "(default ./.agentwire)", "(default info)", "(default 8765; 0 picks…)"
  { pattern: /(?<=\()default ([^\s:;,)"]+)[;:,)]/, kind: "value" },
  // "Default chat." — one bare word ending the sentence (not "Default time limit of…").
  { pattern: /\bDefault ([\w-]+)\.(?:\s|$)/, kind: "value" },
  // "lowdb (default; files in dataDir)", "text (default, for people)", "null (the default): …"
  { pattern: /\b([\w.-]+) \((?:the )?default[;,)]/, kind: "value" },
];

/** "Default: a short built-in template; …", "(default: the server's)", "default: the conversation's toolTimeoutMs." */
const PHRASE = /\b[Dd]efault: /g;

/** The default a description states, or undefined when it states none. The earliest statement in the text wins. */
export function proseDefault(description: string): ProseDefault | undefined {
  let best: { index: number; found: ProseDefault } | undefined;
  const consider = (index: number, found: ProseDefault) => {
    if (found.text !== "" && (best === undefined || index < best.index)) best = { index, found };
  };
  for (const { pattern, kind } of PATTERNS) {
    const match = pattern.exec(description);
    if (match) consider(match.index, { kind, text: match[1]!.trim() });
  }
  for (const match of description.matchAll(PHRASE)) {
    consider(match.index, { kind: "phrase", text: phraseAt(description, match.index + match[0].length) });
  }
  return best?.found;
}

/**
 * The words from `start` to the end of their clause: a `;`, a `.` ending the
 * sentence, or the `)` closing a parenthesis the phrase sits in. Brackets the
 * phrase opens itself ("the server's --tool-timeout (120000 unless set)") stay whole.
 */
function phraseAt(text: string, start: number): string {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === "(" || c === "{" || c === "[") depth++;
    else if (c === ")" || c === "}" || c === "]") {
      if (depth === 0) return text.slice(start, i).trim();
      depth--;
    } else if (depth === 0 && (c === ";" || (c === "." && (i + 1 === text.length || /\s/.test(text[i + 1]!))))) {
      return text.slice(start, i).trim();
    }
  }
  return text.slice(start).trim();
}
