/** read_file's bounds: read by the tool and by its arguments' schema (file-tool-arguments.ts), which loads apart from it. */

/** Most lines returned by one call. */
export const READ_MAX_LINES = 2000;
/** Most bytes of numbered text returned by one call. */
export const READ_MAX_BYTES = 256 * 1024;
/** Characters kept of one line; the rest of it is cut with a marker. */
export const READ_MAX_LINE_CHARS = 2000;
