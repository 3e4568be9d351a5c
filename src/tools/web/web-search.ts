/**
 * web_search: ask the configured search backend (search-backends.ts) and
 * return a numbered title / URL / snippet list as text for the model.
 * Failures (HTTP errors with their status and the start of the body, an
 * answer that is not the expected JSON, the time limit) are tool errors
 * the model can read; interrupt cancels the request.
 */
import * as z from "zod";
import { WEB_SEARCH_DEFAULTS } from "../../../protocol/tool-defaults.js";
import type { Tool, ToolResult, ToolRunContext } from "../tool.js";
import { describeNetworkError, readCappedBody, startDeadline } from "./bounded-request.js";
import type { SearchBackend, SearchResult } from "./search-backends.js";

export interface WebSearchOptions {
  backend: SearchBackend;
  /** Results returned per search. Default: WEB_SEARCH_DEFAULTS. */
  maxResults?: number;
  /** Time limit of one search; the conversation's tool limit caps it. Default: WEB_SEARCH_DEFAULTS. */
  timeoutMs?: number;
}

/** A search answer larger than this is not a search answer. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Of an HTTP error's body, this much is quoted to the model. */
const ERROR_BODY_CHARS = 300;
/** Snippets beyond this are cut: the list is for choosing what to fetch. */
const MAX_SNIPPET_CHARS = 500;

export const WebSearchArguments = z.strictObject({
  query: z.string().trim().min(1).max(400).describe("What to search the web for."),
});
export type WebSearchArguments = z.infer<typeof WebSearchArguments>;

export function createWebSearchTool(options: WebSearchOptions): Tool<WebSearchArguments> {
  const settings = {
    backend: options.backend,
    maxResults: options.maxResults ?? WEB_SEARCH_DEFAULTS.maxResults,
    timeoutMs: options.timeoutMs ?? WEB_SEARCH_DEFAULTS.timeoutMs,
  };
  return {
    name: "web_search",
    description:
      `Search the web and return up to ${settings.maxResults} results, each with its title, URL and a snippet. ` +
      "Use web_fetch (when available) to read a result in full.",
    parameters: WebSearchArguments,
    annotations: { readOnlyHint: true, destructiveHint: false },
    source: "web",
    kind: "search",
    title: "Search the web",
    describeCall: (args) => (typeof args.query === "string" && args.query.trim() ? { title: `Search the web for "${args.query.trim()}"` } : {}),
    run: (args, context) => webSearch(args.query, context, settings),
  };
}

async function webSearch(query: string, context: ToolRunContext, settings: Required<WebSearchOptions>): Promise<ToolResult> {
  const { backend } = settings;
  if (context.signal.aborted) return failure("[interrupted before the request started]");
  const limit = Number.isFinite(context.timeoutMs) && context.timeoutMs > 0 ? context.timeoutMs : settings.timeoutMs;
  const timeoutMs = Math.min(settings.timeoutMs, limit);
  const deadline = startDeadline(context.signal, timeoutMs);
  const request = backend.request(query, settings.maxResults);
  context.onOutput("stdout", `searching (${backend.name}): ${query}\n`);
  try {
    // No redirects: one could carry the API key header to another host.
    const response = await fetch(request.url, { headers: request.headers, signal: deadline.signal, redirect: "error" });
    const body = await readCappedBody(response, MAX_ANSWER_BYTES);
    const answer = body.bytes.toString("utf8");
    if (!response.ok) {
      const excerpt = answer.replace(/\s+/g, " ").trim().slice(0, ERROR_BODY_CHARS);
      return failure(
        `Search failed: the ${backend.name} backend answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}` +
          (excerpt ? `: ${excerpt}` : "."),
      );
    }
    if (body.truncated) return failure(`Search failed: the ${backend.name} backend's answer is larger than ${MAX_ANSWER_BYTES} bytes.`);
    let decoded: unknown;
    try {
      decoded = JSON.parse(answer);
    } catch (error) {
      const excerpt = answer.replace(/\s+/g, " ").trim().slice(0, 120);
      return failure(`Search failed: the ${backend.name} backend's answer is not valid JSON (${(error as Error).message}): ${excerpt}`);
    }
    let results: SearchResult[];
    try {
      results = backend.parse(decoded);
    } catch (error) {
      return failure(`Search failed: unexpected answer from the ${backend.name} backend: ${(error as Error).message}.`);
    }
    const shown = results.filter((r) => r.url !== "").slice(0, settings.maxResults);
    context.onOutput("stdout", `${shown.length} result${shown.length === 1 ? "" : "s"}\n`);
    return { success: true, output: formatResults(query, shown) };
  } catch (error) {
    const why = deadline.reason();
    if (why === "timeout") return failure(`Search timed out after ${timeoutMs} ms (${backend.name} backend).`);
    if (why === "interrupt") return failure("[interrupted]");
    return failure(`Search failed: could not reach the ${backend.name} backend: ${describeNetworkError(error)}.`);
  } finally {
    deadline.dispose();
  }
}

function formatResults(query: string, results: SearchResult[]): string {
  if (results.length === 0) return `No results for ${JSON.stringify(query)}.`;
  const lines = [`Results for ${JSON.stringify(query)}:`, ""];
  results.forEach((r, i) => {
    lines.push(`${i + 1}. ${oneLine(r.title) || "(untitled)"}`, `   ${r.url}`);
    const snippet = oneLine(r.snippet);
    if (snippet) lines.push(`   ${snippet.length > MAX_SNIPPET_CHARS ? `${snippet.slice(0, MAX_SNIPPET_CHARS)}…` : snippet}`);
    lines.push("");
  });
  return lines.join("\n").trimEnd();
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function failure(output: string): ToolResult {
  return { success: false, output };
}
