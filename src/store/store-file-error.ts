/**
 * A store file that cannot be read, parsed or written. The message names the
 * file so an operator can find it; it is meant for the server log, not for
 * clients (it contains a local path).
 */
export class StoreFileError extends Error {
  constructor(
    readonly file: string,
    problem: string,
    options?: { cause?: unknown },
  ) {
    super(`agentwire store file ${file} ${problem}`, options);
    this.name = "StoreFileError";
  }
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && !error.message.startsWith(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/**
 * Every I/O failure leaves the store as a StoreFileError, so the server maps
 * storage trouble to one error code in one place. `what` completes "file …",
 * e.g. "could not be written".
 */
export function asStoreFileError(error: unknown, file: string, what: string): StoreFileError {
  if (error instanceof StoreFileError) return error;
  return new StoreFileError(file, `${what} (${describeError(error)})`, { cause: error });
}

export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Failures of the machine rather than of one file (out of descriptors or
 * memory, a failing device): they say nothing about the file's content, so
 * they never mark a conversation as damaged.
 */
const TRANSIENT_CODES = new Set(["EMFILE", "ENFILE", "EAGAIN", "ENOMEM", "EINTR", "EBUSY", "EIO", "ETIMEDOUT"]);

export function isTransientIoError(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && TRANSIENT_CODES.has(code);
}
