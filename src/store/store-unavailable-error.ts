/**
 * The configured store could not be opened at all (its database is
 * unreachable, refuses us, or has a schema this version cannot use). The
 * message is one line for the operator, naming where the store is and why,
 * never a password; the CLI prints it as is and stops the start.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}
