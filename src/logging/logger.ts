/**
 * Minimal leveled logger on stderr. stdout is reserved for the one
 * "agentwire listening on …" line that scripts and tests wait for.
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(message: string, detail?: unknown): void;
  info(message: string, detail?: unknown): void;
  warn(message: string, detail?: unknown): void;
  error(message: string, detail?: unknown): void;
}

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const threshold = order[level];
  const emit = (lvl: LogLevel, message: string, detail?: unknown) => {
    if (order[lvl] < threshold) return;
    let line = `${new Date().toISOString()} ${lvl.padEnd(5)} ${message}`;
    if (detail instanceof Error) line += `\n${detail.stack ?? detail.message}`;
    else if (detail !== undefined) line += ` ${safeJson(detail)}`;
    write(line + "\n");
  };
  return {
    debug: (m, d) => emit("debug", m, d),
    info: (m, d) => emit("info", m, d),
    warn: (m, d) => emit("warn", m, d),
    error: (m, d) => emit("error", m, d),
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
