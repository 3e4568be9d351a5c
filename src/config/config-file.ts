import { createHash } from "node:crypto";
import { dirname, isAbsolute, resolve } from "node:path";
import { createScanner, type Node, parseTree, printParseErrorCode, type ParseError } from "jsonc-parser";
import type { AgentwireConfigFile } from "../../protocol/config.js";
import { formatIssuePath } from "../../protocol/issue-path.js";
import { readBoundedFile, UnreadableFileError } from "./bounded-read.js";
import { placeProblem } from "./config-place.js";
import { parseConfigValues } from "./config-check.js";

/** Largest agentwire.json read; a real one is a few KiB, and the whole file is parsed in one go. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;
/** Deepest nesting of objects and arrays in a file (the schema needs about 8; custom tool parameter schemas some more). */
export const MAX_CONFIG_DEPTH = 64;

/** A configuration file that cannot be used: which file, where in it, and what is wrong. */
export class ConfigFileError extends Error {
  constructor(
    readonly file: string,
    /** `line 3, column 5` for a syntax error, a key path such as `limits.maxBatch` for a wrong value. */
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${file}: ${where}: ${problem}`);
  }
}

/** A file that was read (its checked values and the digest `agentwire trust` records), or left unread and why. */
export type LoadedConfigFile = { values: AgentwireConfigFile; sha256: string; ignored?: undefined } | { ignored: string };

/**
 * Reads and checks one agentwire.json (JSON with comments and trailing
 * commas). Every problem is reported, not just the first; an unknown key is
 * one of them. Relative paths inside it are made absolute against the
 * file's own directory, so a file means the same wherever the server starts.
 *
 * With `checkOwner`, a file that is not the user's own, or that its group or
 * others may write, is not read (`ignored` says why) — judged on the
 * descriptor opened, so a link cannot point the check elsewhere. A file that
 * is not a regular file, or is too large or too deep, is an error either way.
 */
export function loadConfigFile(file: string, options: { checkOwner: boolean }): LoadedConfigFile {
  let bytes: Buffer;
  try {
    const read = readBoundedFile(file, MAX_CONFIG_FILE_BYTES);
    const problem = options.checkOwner ? placeProblem(read.stat) : undefined;
    if (problem) return { ignored: `the file is ${problem}` };
    bytes = read.bytes;
  } catch (error) {
    if (error instanceof UnreadableFileError) throw new ConfigFileError(file, "file", error.message);
    throw error;
  }
  return { values: parseConfigText(file, bytes.toString("utf8")), sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** loadConfigFile without the ownership check: for `--config FILE`, which the user named. */
export function readConfigFile(file: string): AgentwireConfigFile {
  return (loadConfigFile(file, { checkOwner: false }) as { values: AgentwireConfigFile }).values;
}

/** The checked values of a file's text (see loadConfigFile). */
export function parseConfigText(file: string, text: string): AgentwireConfigFile {
  // The parser recurses once per level: bound the depth first, with a scan that does not.
  const tooDeep = depthBeyond(text, MAX_CONFIG_DEPTH);
  if (tooDeep) throw new ConfigFileError(file, `line ${tooDeep.line}, column ${tooDeep.column}`, `nested deeper than ${MAX_CONFIG_DEPTH} levels`);
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const first = errors[0]!;
    const { line, column } = lineAndColumn(text, first.offset);
    throw new ConfigFileError(file, `line ${line}, column ${column}`, `JSON syntax error (${describeParseError(first)})`);
  }
  if (tree === undefined) throw new ConfigFileError(file, "file", "is empty; write {} for a file that sets nothing");
  const forbidden: (string | number)[][] = [];
  const raw = toValue(tree, [], forbidden);
  const unknownKey = "unknown key (misspelt, or not a setting of this version)";
  const problems = forbidden.map((path) => ({ path: formatIssuePath(path), message: unknownKey }));
  const parsed = parseConfigValues(raw);
  if (!parsed.success) {
    for (const issue of parsed.issues) {
      // zod reports an unknown key on its parent; name the key itself, which is what the user typed.
      const keys = issue.code === "unrecognized_keys" ? issue.keys : [undefined];
      for (const key of keys) {
        const path = formatIssuePath(key === undefined ? issue.path : [...issue.path, key]) || "(top level)";
        problems.push({ path, message: key === undefined ? issue.message : unknownKey });
      }
    }
  }
  if (problems.length > 0 || !parsed.success) {
    const first = problems[0]!;
    const more = problems.length > 1 ? `; and ${problems.slice(1).map((p) => `${p.path}: ${p.message}`).join("; ")}` : "";
    throw new ConfigFileError(file, first.path, `${first.message}${more}`);
  }
  // The values as written, not as parsed: parsing fills in every default, and a file must set only what it says
  // (a nearer file's defaults would hide a farther file's values, and trust would see keys the file never set).
  return withAbsolutePaths(raw as AgentwireConfigFile, dirname(file));
}

/**
 * The parse tree as plain values. A `__proto__` key is left out and listed
 * in `forbidden`: assigned to an object it would set the object's prototype
 * (the keys under it would then apply without ever being checked) instead of
 * being the unknown key it is.
 */
function toValue(node: Node, path: (string | number)[], forbidden: (string | number)[][]): unknown {
  if (node.type === "array") return (node.children ?? []).map((child, index) => toValue(child, [...path, index], forbidden));
  if (node.type !== "object") return node.value;
  const out: Record<string, unknown> = {};
  for (const property of node.children ?? []) {
    const [keyNode, valueNode] = property.children ?? [];
    const key = String(keyNode?.value);
    if (key === "__proto__") {
      forbidden.push([...path, key]);
      continue;
    }
    if (valueNode) out[key] = toValue(valueNode, [...path, key], forbidden);
  }
  return out;
}

// jsonc-parser's SyntaxKind values (a const enum, which the bundler cannot inline from a .d.ts).
const OPEN_BRACE = 1;
const CLOSE_BRACE = 2;
const OPEN_BRACKET = 3;
const CLOSE_BRACKET = 4;
const EOF = 17;

/** Where nesting first goes past `max` levels (1-based line and column), or undefined. Strings and comments are tokens, so brackets inside them do not count. */
function depthBeyond(text: string, max: number): { line: number; column: number } | undefined {
  const scanner = createScanner(text, true);
  let depth = 0;
  for (let token = scanner.scan(); token !== EOF; token = scanner.scan()) {
    if (token === OPEN_BRACE || token === OPEN_BRACKET) {
      depth++;
      if (depth > max) return { line: scanner.getTokenStartLine() + 1, column: scanner.getTokenStartCharacter() + 1 };
    } else if (token === CLOSE_BRACE || token === CLOSE_BRACKET) {
      depth--;
    }
  }
  return undefined;
}

function withAbsolutePaths(config: AgentwireConfigFile, base: string): AgentwireConfigFile {
  const absolute = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  const out: AgentwireConfigFile = { ...config };
  if (config.server?.dataDir) out.server = { ...config.server, dataDir: absolute(config.server.dataDir) };
  if (config.mcpServers) {
    out.mcpServers = Object.fromEntries(
      Object.entries(config.mcpServers).map(([name, def]) => [name, "cwd" in def && def.cwd ? { ...def, cwd: absolute(def.cwd) } : def]),
    );
  }
  return out;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

function describeParseError(error: ParseError): string {
  const name = printParseErrorCode(error.error);
  // "PropertyNameExpected" → "property name expected"
  return name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}
