/**
 * Constants of attachments.ts that the server's start path reads, kept apart from
 * its zod schemas, which only requests need. attachments.ts re-exports them
 * (`export *`), so its importers need not change; but start-path code imports
 * them through protocol/index.ts (or from this file), so that attachments.ts and its
 * schemas stay out of the bundle's start chunks
 * (test/bundle/start-path-schemas.test.ts).
 */
/** Most attachments on one message. */
export const MAX_ATTACHMENTS = 20;
/** Largest text file (or line range of one) an attachment may carry, in bytes. */
export const MAX_FILE_ATTACHMENT_BYTES = 256 * 1024;
/** Largest image asset, in bytes (decoded). */
export const MAX_ASSET_BYTES = 5 * 1024 * 1024;
/** Base64 text of MAX_ASSET_BYTES bytes. */
export const MAX_ASSET_BASE64_CHARS = 4 * Math.ceil(MAX_ASSET_BYTES / 3);

/** Image types accepted by asset.upload: the four every vision model takes, each recognisable by its first bytes. */
export const IMAGE_MIME_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

/** One of IMAGE_MIME_TYPES (what the store checks a stored asset's type with). */
export function isImageMimeType(value: unknown): value is (typeof IMAGE_MIME_TYPES)[number] {
  return (IMAGE_MIME_TYPES as readonly unknown[]).includes(value);
}

/** Asset ids become file names in the store: the alphabet is safe there (no dots or slashes). */
export const ASSET_ID_PATTERN = /^a_[A-Za-z0-9_-]{1,100}$/;
