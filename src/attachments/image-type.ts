import type { ImageMimeType } from "../../protocol/index.js";

/**
 * The image type of some bytes, by their signature ("magic bytes"), not by
 * what a client claims: a declared type could be wrong or a lie, and the
 * model endpoint rejects an image whose data URL names the wrong type.
 */
const SIGNATURES: readonly { mimeType: ImageMimeType; matches: (b: Uint8Array) => boolean }[] = [
  { mimeType: "image/png", matches: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mimeType: "image/jpeg", matches: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { mimeType: "image/gif", matches: (b) => ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a") },
  // RIFF container: "RIFF", 4 bytes of length, then the form type "WEBP".
  { mimeType: "image/webp", matches: (b) => ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP") },
];

/** The type these bytes are, or undefined when they are none of PNG, JPEG, GIF and WebP. */
export function sniffImageType(bytes: Uint8Array): ImageMimeType | undefined {
  return SIGNATURES.find((signature) => signature.matches(bytes))?.mimeType;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((byte, i) => bytes[i] === byte);
}

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  if (bytes.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}
