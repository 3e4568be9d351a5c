/**
 * One linear pass over a fetched page that makes it safe to hand to the
 * Markdown converter (node-html-markdown and the parser beneath it), whose
 * costs are far from linear on hostile input:
 *
 * - unclosed elements: its parser repairs each one at the end of the page
 *   with work proportional to what it holds (20 KB of unclosed `<div>`s took
 *   20 s); here every element is closed explicitly, and nesting deeper than
 *   MAX_DEPTH is flattened (the tags dropped, their text kept);
 * - its tag pattern backtracks exponentially on a tag that never ends
 *   (`<a x x x …` with no `>`: 30 words took seconds); here every tag is
 *   written out again in a plain form, and a `<` that opens no complete tag
 *   becomes `&lt;`;
 * - it looks for the end of each `<script>`/`<style>` by lower-casing the
 *   rest of the page (quadratic in their number), and it builds its output
 *   by appending to one string that is copied whole at each step (quadratic
 *   in the output): here scripts, styles and comments are dropped, and the
 *   text passed on is capped at what the caller will return.
 *
 * The structure kept is what a browser would build, roughly: a `<p>` ends at
 * the next block, an `<li>` at the next item, an end tag closes the element
 * it names and everything open inside it, a stray end tag is dropped.
 */

/** Elements open at once, at most; deeper start tags are dropped (their text stays). */
export const MAX_DEPTH = 128;
/**
 * Elements passed on, at most: the converter's cost grows with elements
 * times output (200,000 `<br>` took minutes), and a page this long has more
 * to say than is returned anyway.
 */
export const MAX_ELEMENTS = 20_000;

/** Content skipped whole up to its end tag: not HTML, and the converter shows none of it. */
const SKIPPED = new Set(["script", "style", "noscript", "template", "iframe", "noembed", "noframes", "xmp"]);
/** Content that is text up to its end tag (a `<` inside is a character). */
const RAW_TEXT = new Set(["title", "textarea"]);
/** Elements that never hold anything and take no end tag. */
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "keygen"]);
/** Start tags that end an open `<p>`. */
const CLOSES_P = new Set([
  "address", "article", "aside", "blockquote", "details", "dialog", "div", "dl", "fieldset", "figcaption", "figure", "footer",
  "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "main", "menu", "nav", "ol", "p", "pre", "section",
  "table", "ul",
]);
const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
/** For a start tag: the open elements it ends (the nearest one, with all inside it), searched no further than a boundary. */
const ENDS_SIBLING: Record<string, { ends: Set<string>; boundary: Set<string> }> = {
  li: { ends: new Set(["li"]), boundary: new Set(["ul", "ol", "menu"]) },
  dt: { ends: new Set(["dt", "dd"]), boundary: new Set(["dl"]) },
  dd: { ends: new Set(["dt", "dd"]), boundary: new Set(["dl"]) },
  td: { ends: new Set(["td", "th"]), boundary: new Set(["tr", "table"]) },
  th: { ends: new Set(["td", "th"]), boundary: new Set(["tr", "table"]) },
  tr: { ends: new Set(["tr"]), boundary: new Set(["table", "thead", "tbody", "tfoot"]) },
  thead: { ends: new Set(["thead", "tbody", "tfoot"]), boundary: new Set(["table"]) },
  tbody: { ends: new Set(["thead", "tbody", "tfoot"]), boundary: new Set(["table"]) },
  tfoot: { ends: new Set(["thead", "tbody", "tfoot"]), boundary: new Set(["table"]) },
  option: { ends: new Set(["option"]), boundary: new Set(["select", "datalist"]) },
  a: { ends: new Set(["a"]), boundary: new Set() },
};
/** Attributes the converter reads (links, images, code languages); the rest are left out. */
const KEPT_ATTRIBUTES = new Set(["href", "src", "alt", "title", "class"]);

export interface BoundedHtml {
  html: string;
  /** The page had more text than `maxTextChars`, or more than MAX_ELEMENTS elements: what follows the cut was left out. */
  cut: "text" | "elements" | null;
  /** Start tags dropped for nesting deeper than MAX_DEPTH. */
  tooDeep: number;
}

const isWhitespace = (code: number) => code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d || code === 0x0c;
const isLetter = (code: number) => (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a);
/** A tag name goes on while these follow (as the converter's parser reads names). */
const isNameChar = (code: number) => isLetter(code) || (code >= 0x30 && code <= 0x39) || code === 0x2d || code === 0x2e || code === 0x3a || code === 0x5f;

/**
 * The page rewritten well-formed, at most MAX_DEPTH deep, its text (counted
 * with each run of whitespace as one character) cut after `maxTextChars`.
 * Linear in the page's length.
 */
export function boundHtml(page: string, maxTextChars: number): BoundedHtml {
  const out: string[] = [];
  const open: string[] = [];
  const dropped = new Map<string, number>();
  let tooDeep = 0;
  let textLeft = maxTextChars;
  let elementsLeft = MAX_ELEMENTS;
  let cut: BoundedHtml["cut"] = null;
  let at = 0;

  const close = (depth: number) => {
    while (open.length > depth) out.push(`</${open.pop()}>`);
  };
  /** Passes text on, counted against the budget; false once the budget is spent. */
  const text = (chunk: string): boolean => {
    const kept = takeText(chunk, textLeft);
    textLeft -= kept.counted;
    out.push(kept.text);
    if (kept.text.length < chunk.length) cut = "text";
    return cut === null;
  };

  while (at < page.length && cut === null) {
    const lt = page.indexOf("<", at);
    if (lt === -1) {
      text(page.slice(at));
      break;
    }
    if (lt > at && !text(page.slice(at, lt))) break;
    at = lt;
    const next = page.charCodeAt(lt + 1);
    if (page.startsWith("<!--", lt)) {
      const end = page.indexOf("-->", lt + 4);
      at = end === -1 ? page.length : end + 3;
    } else if (next === 0x21 /* ! */ || next === 0x3f /* ? */) {
      // A doctype, CDATA section or processing instruction: nothing to show.
      const end = page.indexOf(">", lt + 2);
      at = end === -1 ? page.length : end + 1;
    } else if (next === 0x2f /* / */ && isLetter(page.charCodeAt(lt + 2))) {
      const end = page.indexOf(">", lt + 2);
      if (end === -1) {
        text(escapeLt(page.slice(lt)));
        break;
      }
      let nameEnd = lt + 2;
      while (nameEnd < end && isNameChar(page.charCodeAt(nameEnd))) nameEnd++;
      endTag(page.slice(lt + 2, nameEnd).toLowerCase());
      at = end + 1;
    } else if (isLetter(next)) {
      const tag = readStartTag(page, lt);
      if (tag === null) {
        // It never ends: the rest of the page is text.
        text(escapeLt(page.slice(lt)));
        break;
      }
      at = tag.end;
      if (SKIPPED.has(tag.name)) {
        if (!tag.selfClosing) at = afterEndTag(page, tag.name, at);
        continue;
      }
      startTag(tag.name, tag.attributes, tag.selfClosing);
      if (RAW_TEXT.has(tag.name) && !tag.selfClosing) {
        const contentEnd = endTagAt(page, tag.name, at);
        const content = page.slice(at, contentEnd === -1 ? page.length : contentEnd);
        if (!text(escapeLt(content))) break;
        at = contentEnd === -1 ? page.length : afterEndTag(page, tag.name, contentEnd);
        endTag(tag.name);
      }
    } else {
      // "a < b", "<3", "</ >": a character, not markup.
      if (!text("&lt;")) break;
      at = lt + 1;
    }
  }
  close(0);
  return { html: out.join(""), cut, tooDeep };

  function startTag(name: string, attributes: string, selfClosing: boolean): void {
    if (elementsLeft === 0) {
      cut = "elements";
      return;
    }
    if (open.at(-1) === "p" && CLOSES_P.has(name)) close(open.length - 1);
    if (HEADINGS.has(name) && HEADINGS.has(open.at(-1) ?? "")) close(open.length - 1);
    const sibling = ENDS_SIBLING[name];
    if (sibling !== undefined) {
      for (let i = open.length - 1; i >= 0 && !sibling.boundary.has(open[i]); i--) {
        if (sibling.ends.has(open[i])) {
          close(i);
          break;
        }
      }
    }
    if (VOID.has(name) || selfClosing) {
      elementsLeft--;
      out.push(VOID.has(name) ? `<${name}${attributes}>` : `<${name}${attributes}></${name}>`);
      return;
    }
    if (open.length >= MAX_DEPTH) {
      tooDeep++;
      dropped.set(name, (dropped.get(name) ?? 0) + 1);
      return;
    }
    elementsLeft--;
    out.push(`<${name}${attributes}>`);
    open.push(name);
  }

  function endTag(name: string): void {
    const droppedStarts = dropped.get(name) ?? 0;
    if (droppedStarts > 0) {
      // The end of an element whose start was dropped for depth.
      dropped.set(name, droppedStarts - 1);
      return;
    }
    const index = open.lastIndexOf(name);
    if (index !== -1) close(index);
  }
}

/** The first `<title>`'s text, whitespace collapsed and capped; found in one pass. Entities are left as they are. */
export function htmlTitle(page: string, maxChars = 1000): string | undefined {
  const start = /<title(?=[\s/>])/i.exec(page);
  if (start === null) return undefined;
  const gt = page.indexOf(">", start.index);
  if (gt === -1) return undefined;
  const end = endTagAt(page, "title", gt + 1);
  if (end === -1) return undefined;
  const title = page.slice(gt + 1, Math.min(end, gt + 1 + maxChars * 4)).replace(/\s+/g, " ").trim().slice(0, maxChars);
  return title === "" ? undefined : title;
}

interface StartTag {
  name: string;
  /** Kept attributes, written out again: ` name="value"` each. */
  attributes: string;
  selfClosing: boolean;
  /** Just after its `>`. */
  end: number;
}

/** The start tag at `lt` (`<` then a letter), or null when the page ends inside it. */
function readStartTag(page: string, lt: number): StartTag | null {
  let i = lt + 1;
  while (i < page.length && isNameChar(page.charCodeAt(i))) i++;
  const name = page.slice(lt + 1, i).toLowerCase();
  let attributes = "";
  let selfClosing = false;
  for (;;) {
    while (i < page.length && (isWhitespace(page.charCodeAt(i)) || page[i] === "/")) {
      selfClosing = page[i] === "/";
      i++;
    }
    if (i >= page.length) return null;
    if (page[i] === ">") return { name, attributes, selfClosing, end: i + 1 };
    selfClosing = false;
    const nameStart = i;
    i++; // a first "=" belongs to the name
    while (i < page.length && !isWhitespace(page.charCodeAt(i)) && page[i] !== "/" && page[i] !== ">" && page[i] !== "=") i++;
    const attribute = page.slice(nameStart, i).toLowerCase();
    while (i < page.length && isWhitespace(page.charCodeAt(i))) i++;
    let value = "";
    if (page[i] === "=") {
      i++;
      while (i < page.length && isWhitespace(page.charCodeAt(i))) i++;
      const quote = page[i];
      if (quote === '"' || quote === "'") {
        const closing = page.indexOf(quote, i + 1);
        if (closing === -1) return null;
        value = page.slice(i + 1, closing);
        i = closing + 1;
      } else {
        const valueStart = i;
        while (i < page.length && !isWhitespace(page.charCodeAt(i)) && page[i] !== ">") i++;
        value = page.slice(valueStart, i);
      }
    }
    if (KEPT_ATTRIBUTES.has(attribute)) attributes += ` ${attribute}="${value.replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")}"`;
  }
}

/** Where `</name` (any case, then a non-name character) starts at or after `from`, or -1. */
function endTagAt(page: string, name: string, from: number): number {
  const pattern = new RegExp(`</${name}(?![-.:_a-z0-9])`, "gi");
  pattern.lastIndex = from;
  return pattern.exec(page)?.index ?? -1;
}

/** Just after the end tag of `name` that closes content starting at `from` (the page's end when there is none). */
function afterEndTag(page: string, name: string, from: number): number {
  const start = endTagAt(page, name, from);
  if (start === -1) return page.length;
  const gt = page.indexOf(">", start);
  return gt === -1 ? page.length : gt + 1;
}

function escapeLt(text: string): string {
  return text.replace(/</g, "&lt;");
}

/**
 * The start of `chunk` that fits in `budget` characters of text, each run
 * of whitespace counted as one; an entity is not cut in half.
 */
function takeText(chunk: string, budget: number): { text: string; counted: number } {
  let counted = 0;
  let inSpace = false;
  for (let i = 0; i < chunk.length; i++) {
    const space = isWhitespace(chunk.charCodeAt(i));
    if (!(space && inSpace)) counted++;
    inSpace = space;
    if (counted > budget) {
      const cut = chunk.slice(0, i);
      const amp = cut.lastIndexOf("&");
      const halfEntity = amp !== -1 && cut.length - amp <= 32 && /^&[#a-zA-Z0-9]*$/.test(cut.slice(amp));
      return { text: halfEntity ? cut.slice(0, amp) : cut, counted: budget };
    }
  }
  return { text: chunk, counted };
}
