/**
 * An HTML page as Markdown, with its title: the offload job web_fetch runs
 * in a worker thread (../offload/deadline-workers.ts) under a hard deadline.
 * The page goes through bounded-html.ts first, which bounds what the
 * converter is given (depth, text, well-formed tags) in one linear pass.
 */
import { importCommonJs } from "../../lazy-commonjs.js";
import { boundHtml, htmlTitle, MAX_DEPTH, MAX_ELEMENTS } from "./bounded-html.js";

export interface HtmlPageInput {
  html: string;
  /** Text converted at most, in characters (whitespace runs counting as one): what the caller returns, no more. */
  maxTextChars: number;
}

export interface HtmlPage {
  markdown: string;
  title?: string;
  /** Notes on what was left out, for the model. */
  notes: string[];
}

type Converter = typeof import("node-html-markdown").NodeHtmlMarkdown;
let converter: Converter | undefined;

export async function convertHtmlPage({ html, maxTextChars }: HtmlPageInput): Promise<HtmlPage> {
  // Loaded on first use: the module costs close to a second of start-up on a busy machine.
  converter ??= (await importCommonJs(import("node-html-markdown"))).NodeHtmlMarkdown;
  const bounded = boundHtml(html, maxTextChars);
  const notes: string[] = [];
  if (bounded.cut === "text") notes.push(`[the page has more text than is returned (${maxTextChars} characters): only its start was converted]`);
  if (bounded.cut === "elements") notes.push(`[the page has more than ${MAX_ELEMENTS} elements: only its start was converted]`);
  if (bounded.tooDeep > 0) notes.push(`[${bounded.tooDeep} elements nested deeper than ${MAX_DEPTH} levels were flattened]`);
  const title = htmlTitle(html);
  return {
    markdown: converter.translate(bounded.html),
    // Through the converter for its entity decoding (&amp; → &); a "<" in it is a character.
    ...(title !== undefined ? { title: converter.translate(title.replace(/</g, "&lt;")) } : {}),
    notes,
  };
}
