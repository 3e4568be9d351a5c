/**
 * Syntax highlighting of code blocks: highlight.js 11's core with only the
 * languages an agent's answers mostly hold, registered here, so the bundle
 * carries a handful of grammars instead of all 190. A block whose language is
 * not registered (or not named) is shown as plain, escaped text — never
 * guessed: auto-detection runs every grammar on every streamed delta.
 *
 * highlight.js escapes the code it wraps in its token spans, so its output is
 * safe to put in the page as HTML.
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

// Each grammar declares its own aliases (ts, js, py, sh, zsh, html, yml, …).
for (const [name, grammar] of Object.entries({ bash, css, diff, go, javascript, json, python, rust, shell, typescript, xml, yaml })) {
  hljs.registerLanguage(name, grammar);
}

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The block's language (its info string's first word) when a registered grammar knows it, else undefined. */
export function knownLanguage(lang: string | undefined): string | undefined {
  const name = lang?.trim().split(/\s+/)[0]?.toLowerCase();
  return name && hljs.getLanguage(name) ? name : undefined;
}

/** HTML for one code block's text: token spans when its language is known, escaped text otherwise. */
export function highlightCode(code: string, lang: string | undefined): string {
  const language = knownLanguage(lang);
  if (!language) return escapeHtml(code);
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}
