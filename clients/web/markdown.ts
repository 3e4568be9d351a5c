/**
 * Model output rendered as markdown, safely: the model's text is untrusted
 * (a prompt injection can make it print anything), so raw HTML in it is shown
 * as text, never parsed, and links only keep http(s)/mailto targets. Images
 * become links: loading them would reach other hosts (and CSP blocks them anyway).
 * Fenced code blocks are highlighted (highlight.ts) when their language is known.
 */
import { Marked, type Tokens } from "marked";
import { escapeHtml, highlightCode, knownLanguage } from "./highlight.js";

/** Only targets that cannot run script; anything else renders as plain text. */
function safeHref(href: string): string | undefined {
  try {
    const url = new URL(href, location.href);
    return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : undefined;
  } catch {
    return undefined;
  }
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    code(token: Tokens.Code) {
      const language = knownLanguage(token.lang);
      const label = language ? ` class="hljs language-${language}" data-language="${language}"` : "";
      return `<pre><code${label}>${highlightCode(token.text, language)}</code></pre>\n`;
    },
    html(token: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(token.text);
    },
    link(token: Tokens.Link) {
      const text = this.parser.parseInline(token.tokens);
      const href = safeHref(token.href);
      if (!href) return text;
      return `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer nofollow">${text}</a>`;
    },
    image(token: Tokens.Image) {
      const href = safeHref(token.href);
      const label = escapeHtml(token.text || token.href);
      return href ? `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer nofollow">[image: ${label}]</a>` : label;
    },
  },
});

/** HTML for `text`; safe to assign to innerHTML by the rules above. */
export function renderMarkdown(text: string): string {
  return marked.parse(text) as string;
}
