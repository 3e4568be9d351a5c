/** A command line that cannot be run as given; the CLI prints it with a pointer to --help and exits 2. */
export class UsageError extends Error {}
