/**
 * Minimal leveled logger on stderr. stdout is reserved for the one
 * "agentwire listening on …" line that scripts and tests wait for.
 *
 * Two formats: `text` (one human line, a stack below it) and `json` (one
 * object per line: {time, level, msg, conversationId?, generationId?, err?,
 * detail?}) for log collectors. The JSON line is written by hand rather than
 * by a logging library: the logger is off the token path (no log call per
 * delta or per frame; bench/log-format.ts measures a line at a few
 * microseconds either way), so a dependency would buy nothing measurable.
 */
import type { LogFormat, LogLevel } from "../../protocol/config.js";

/** The levels and formats are the configuration's (`server.logLevel`, `server.logFormat`). */
export type { LogFormat, LogLevel };
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/** Fields a child logger adds to every line (the json format makes them keys; text appends them). */
export interface LogFields {
  conversationId?: string;
  generationId?: string;
}

export interface Logger {
  debug(message: string, detail?: unknown): void;
  info(message: string, detail?: unknown): void;
  warn(message: string, detail?: unknown): void;
  error(message: string, detail?: unknown): void;
  /** A logger whose lines carry `fields` as well. */
  child(fields: LogFields): Logger;
}

export interface LogOutput {
  /** Default "text". */
  format?: LogFormat;
  /** Where lines go; default stderr. */
  write?: (line: string) => void;
}

/** `output` is where text lines go, or the format and where lines go. */
export function createLogger(level: LogLevel, output: ((line: string) => void) | LogOutput = {}): Logger {
  const { format = "text", write = (l: string) => void process.stderr.write(l) } = typeof output === "function" ? { write: output } : output;
  const threshold = order[level];
  const line = format === "json" ? jsonLine : textLine;
  const make = (fields: LogFields): Logger => {
    const emit = (lvl: LogLevel, message: string, detail?: unknown) => {
      if (order[lvl] < threshold) return;
      write(line(lvl, message, detail, fields));
    };
    return {
      debug: (m, d) => emit("debug", m, d),
      info: (m, d) => emit("info", m, d),
      warn: (m, d) => emit("warn", m, d),
      error: (m, d) => emit("error", m, d),
      child: (more) => make({ ...fields, ...more }),
    };
  };
  return make({});
}

function textLine(level: LogLevel, message: string, detail: unknown, fields: LogFields): string {
  let line = `${new Date().toISOString()} ${level.padEnd(5)} ${message}`;
  if (fields.conversationId) line += ` [${fields.conversationId}${fields.generationId ? ` ${fields.generationId}` : ""}]`;
  if (detail instanceof Error) line += `\n${detail.stack ?? detail.message}`;
  else if (detail !== undefined) line += ` ${safeJson(detail)}`;
  return line + "\n";
}

function jsonLine(level: LogLevel, message: string, detail: unknown, fields: LogFields): string {
  const entry: Record<string, unknown> = { time: new Date().toISOString(), level, msg: message, ...fields };
  if (detail instanceof Error) entry.err = { name: detail.name, message: detail.message, stack: detail.stack };
  else if (detail !== undefined) entry.detail = detail;
  // JSON.stringify escapes newlines inside strings, so one entry is always one line.
  return safeJson(entry) + "\n";
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
