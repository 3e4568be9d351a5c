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
    return code ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
