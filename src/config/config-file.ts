import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse, printParseErrorCode, type ParseError } from "jsonc-parser";
import { AgentwireConfigFile } from "../../protocol/config.js";
import { formatIssuePath } from "../rpc/issue-path.js";

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

/**
 * Reads and checks one agentwire.json (JSON with comments and trailing
 * commas). Every problem is reported, not just the first; an unknown key is
 * one of them. Relative paths inside it are made absolute against the
 * file's own directory, so a file means the same wherever the server starts.
 */
export function readConfigFile(file: string): AgentwireConfigFile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigFileError(file, "file", `cannot be read: ${(error as Error).message}`);
  }
  const errors: ParseError[] = [];
  const raw: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const first = errors[0]!;
    const { line, column } = lineAndColumn(text, first.offset);
    throw new ConfigFileError(file, `line ${line}, column ${column}`, `JSON syntax error (${describeParseError(first)})`);
  }
  if (raw === undefined) throw new ConfigFileError(file, "file", "is empty; write {} for a file that sets nothing");
  const parsed = AgentwireConfigFile.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      // zod reports an unknown key on its parent; name the key itself, which is what the user typed.
      const keys = issue.code === "unrecognized_keys" ? issue.keys : [undefined];
      return keys.map((key) => {
        const path = formatIssuePath(key === undefined ? issue.path : [...issue.path, key]) || "(top level)";
        return { path, message: key === undefined ? issue.message : "unknown key (misspelt, or not a setting of this version)" };
      });
    });
    const flat = problems.flat();
    const first = flat[0]!;
    const more = flat.length > 1 ? `; and ${flat.slice(1).map((p) => `${p.path}: ${p.message}`).join("; ")}` : "";
    throw new ConfigFileError(file, first.path, `${first.message}${more}`);
  }
  return withAbsolutePaths(parsed.data, dirname(file));
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
