import { StoreFileError } from "./store-file-error.js";

/**
 * A PostgreSQL failure while reading or writing. It is a StoreFileError to
 * the layers above, so the server answers a database that is down exactly
 * as it answers a full disk (one mapping, in src/generation/wire-errors.ts);
 * its message names the database and the operation instead of a file.
 */
export class StoreDatabaseError extends StoreFileError {
  constructor(target: string, what: string, cause: unknown) {
    super(target, `${what} failed`, { cause });
    this.name = "StoreDatabaseError";
    this.message = `PostgreSQL store ${target}: ${what} failed (${describeDriverError(cause)})`;
  }
}

/**
 * The driver's reason in one line. Node 20 tries every address of a host
 * name (localhost is ::1 and 127.0.0.1) and reports an AggregateError whose
 * own message is empty: its members say what happened.
 */
export function describeDriverError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return [...new Set(error.errors.map(describeDriverError))].join("; ");
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const text = error.message || (typeof code === "string" ? code : error.name);
    return text.replace(/\s+/g, " ").trim();
  }
  return String(error);
}
