/**
 * What file tools tell the model when they refuse or fail. The message is
 * the whole result text: it names the path as the model wrote it, never the
 * server's absolute paths.
 */

/** A refusal or failure with a message meant for the model. */
export class FileToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FileToolError";
  }
}

/** A file system error in words, for a path as the model named it; null for errors with no plain meaning. */
export function describeFsError(error: unknown, display: string): string | null {
  switch ((error as NodeJS.ErrnoException | null)?.code) {
    case "ENOENT":
      return `"${display}" does not exist`;
    case "EISDIR":
      return `"${display}" is a directory`;
    case "ENOTDIR":
      return `a part of "${display}" is not a directory`;
    case "EACCES":
    case "EPERM":
      return `permission denied for "${display}"`;
    case "ELOOP":
      return `"${display}" goes through a loop of symlinks`;
    case "ENOSPC":
      return "no space left on the device";
    case "EROFS":
      return `"${display}" is on a read-only file system`;
    case "EMFILE":
    case "ENFILE":
      return "too many open files on the server; try again";
    default:
      return null;
  }
}

/** Rethrows a file system error as a FileToolError naming `display`, when it has a plain meaning. */
export function rethrowFsError(error: unknown, display: string): never {
  const described = describeFsError(error, display);
  throw described === null ? error : new FileToolError(described);
}
