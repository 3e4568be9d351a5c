/**
 * Generated blocks inside hand-written files (the method list in docs/clients.md):
 * only the text between `<!-- BEGIN GENERATED: name -->` and
 * `<!-- END GENERATED: name -->` belongs to `npm run gen`; everything around
 * it stays the author's, and `gen:check` compares the block alone.
 */

export interface GeneratedBlock {
  /** File that holds the block, from the repository root. */
  path: string;
  /** Marker name: `methods` in `<!-- BEGIN GENERATED: methods -->`. */
  name: string;
  /** The block's lines, without the markers; ends with a newline. */
  content: string;
}

const begin = (name: string) => `<!-- BEGIN GENERATED: ${name} -->`;
const end = (name: string) => `<!-- END GENERATED: ${name} -->`;

/** Where the block's content starts and ends in `text`, or a reason it cannot be found. */
function locate(text: string, name: string): { from: number; to: number } | string {
  const open = begin(name);
  const close = end(name);
  const first = text.indexOf(open);
  if (first === -1 || text.indexOf(open, first + 1) !== -1) {
    return first === -1 ? `no ${open} marker` : `${open} appears twice`;
  }
  const to = text.indexOf(close, first);
  if (to === -1) return `no ${close} after ${open}`;
  const from = text.indexOf("\n", first) + 1;
  if (from === 0 || from > to) return `${open} must be on a line of its own`;
  return { from, to };
}

/** The block's current content in `text`, or the reason it is missing. */
export function readBlock(text: string, name: string): { content: string } | { problem: string } {
  const where = locate(text, name);
  return typeof where === "string" ? { problem: where } : { content: text.slice(where.from, where.to) };
}

/** `text` with the block's content replaced; throws when the markers are missing (gen must not guess where). */
export function spliceBlock(text: string, name: string, content: string): string {
  const where = locate(text, name);
  if (typeof where === "string") throw new Error(`codegen: cannot write the ${name} block: ${where}`);
  return text.slice(0, where.from) + content + text.slice(where.to);
}
