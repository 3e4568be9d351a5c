/**
 * web_fetch: GET one http(s) URL and return its readable text — HTML as
 * markdown, other text (plain, JSON, XML, CSS, JS …) as it is — with the
 * status and the final URL after redirects.
 *
 * Bounded on every side: only http and https (file:, data:, ftp: … are
 * refused, at the start and on every redirect hop, so a redirect cannot
 * reach a local file), at most 5 redirects, non-text content refused before
 * its body is read, the body read up to maxBytes and no further, the text
 * for the model cut at maxOutputBytes, one time limit for the whole fetch,
 * and interrupt cancels the request at once. HTML is converted off the main
 * thread (html-page.ts, in a worker under a hard deadline): a hostile page
 * can cost a worker thread some seconds, never the server's other clients.
 *
 * Only public addresses are reached unless `allowPrivateNetwork` says
 * otherwise (private-network.ts), checked on the address each hop connects
 * to (guarded-get.ts). A web_fetch that can reach the private network is no
 * longer read-only: a GET to a local service (an admin page, a dev server, a
 * router) may act, so `auto-read-only` asks before running it.
 */
import * as z from "zod";
import { WEB_FETCH_DEFAULTS } from "../../../protocol/tool-defaults.js";
import { OffThreadError, runOffThread } from "../offload/deadline-workers.js";
import { utf8Prefix } from "../output-budget.js";
import type { Tool, ToolResult, ToolRunContext } from "../tool.js";
import { charsetOf, describeNetworkError, discardBody, mediaType, readCappedBody, startDeadline, type Deadline } from "./bounded-request.js";
import { guardedGet } from "./guarded-get.js";
import { NetworkPolicy, PrivateAddressRefused, type AllowPrivateNetwork } from "./private-network.js";
import { fetchCall } from "../tool-display.js";

export interface WebFetchOptions {
  /** Largest body read, in bytes; beyond it reading stops and the result says so. Default: WEB_FETCH_DEFAULTS. */
  maxBytes?: number;
  /** Time limit of one fetch, redirects included; the conversation's tool limit caps it. Default: WEB_FETCH_DEFAULTS. */
  timeoutMs?: number;
  /** Text returned to the model at most, in UTF-8 bytes; the start is kept. Default: WEB_FETCH_DEFAULTS. */
  maxOutputBytes?: number;
  /**
   * Loopback, private, link-local and other non-public addresses reached:
   * none (default), all (true), or those a list names (addresses, CIDR
   * ranges, host names, each optionally with :PORT). An invalid entry
   * throws a ToolConfigError naming it.
   */
  allowPrivateNetwork?: AllowPrivateNetwork;
}

const MAX_REDIRECTS = 5;
/** Hard limit on converting one HTML page (the fetch's own limit applies too); its input is bounded, so this is rarely reached. */
const HTML_CONVERT_DEADLINE_MS = 10_000;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export const WebFetchArguments = z.strictObject({
  url: z.string().min(1).describe("The http:// or https:// URL to fetch."),
});
export type WebFetchArguments = z.infer<typeof WebFetchArguments>;

export function createWebFetchTool(options: WebFetchOptions = {}): Tool<WebFetchArguments> {
  const settings: Settings = {
    maxBytes: options.maxBytes ?? WEB_FETCH_DEFAULTS.maxBytes,
    timeoutMs: options.timeoutMs ?? WEB_FETCH_DEFAULTS.timeoutMs,
    maxOutputBytes: options.maxOutputBytes ?? WEB_FETCH_DEFAULTS.maxOutputBytes,
    policy: NetworkPolicy.from(options.allowPrivateNetwork),
  };
  const opensPrivateNetwork = settings.policy.opensPrivateNetwork;
  return {
    name: "web_fetch",
    description:
      "Fetch a web page or file by http(s) URL (GET) and return its text: HTML converted to markdown, " +
      "plain text, JSON and XML as they are. Images and other binary content are refused. Redirects are " +
      `followed (at most ${MAX_REDIRECTS}); the result starts with the final URL and the HTTP status. ` +
      `Text beyond ${Math.round(settings.maxOutputBytes / 1024)} KiB is cut (the start is kept).` +
      (opensPrivateNetwork ? "" : " Only public addresses are fetched: localhost, private and link-local addresses are refused."),
    parameters: WebFetchArguments,
    // Read-only only while it cannot reach local services: a GET there may act (see the header).
    annotations: { readOnlyHint: !opensPrivateNetwork, destructiveHint: false },
    source: "web",
    kind: "fetch",
    title: "Fetch web page",
    describeCall: (args) => fetchCall(args.url),
    run: (args, context) => webFetch(args.url, context, settings),
  };
}

type Settings = Required<Omit<WebFetchOptions, "allowPrivateNetwork">> & { policy: NetworkPolicy };

async function webFetch(address: string, context: ToolRunContext, settings: Settings): Promise<ToolResult> {
  const first = httpUrl(address);
  if (typeof first === "string") return failure(first);
  if (context.signal.aborted) return failure("[interrupted before the request started]");
  const timeoutMs = Math.min(settings.timeoutMs, positiveOr(context.timeoutMs, settings.timeoutMs));
  const deadline = startDeadline(context.signal, timeoutMs);
  try {
    return await fetchFollowing(first, context, settings, deadline);
  } catch (error) {
    const why = deadline.reason();
    if (why === "timeout") return failure(`Fetching ${address} timed out after ${timeoutMs} ms.`);
    if (why === "interrupt") return failure("[interrupted]");
    return failure(`Fetching ${address} failed: ${describeNetworkError(error)}.`);
  } finally {
    deadline.dispose();
  }
}

async function fetchFollowing(start: URL, context: ToolRunContext, settings: Settings, deadline: Deadline): Promise<ToolResult> {
  let url = start;
  const hops: string[] = [];
  for (;;) {
    context.onOutput("stdout", `GET ${url.href}\n`);
    let response: Response;
    try {
      // Every hop is a new guarded request: a redirect cannot lead where the first URL could not.
      response = await guardedGet(url, {
        policy: settings.policy,
        signal: deadline.signal,
        headers: {
          accept: "text/html, application/xhtml+xml, text/*;q=0.9, application/json;q=0.9, application/xml;q=0.8, */*;q=0.1",
          "user-agent": "agentwire-web_fetch",
        },
      });
    } catch (error) {
      if (!(error instanceof PrivateAddressRefused)) throw error;
      return failure(hops.length === 0 ? error.message : `${hops.join("\n")}\n${error.message}`);
    }
    const location = response.headers.get("location");
    if (!REDIRECT_STATUSES.has(response.status) || location === null) {
      return describeResponse(response, url, hops, context, settings, deadline);
    }
    await discardBody(response);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      return failure(`${url.href} redirected (HTTP ${response.status}) to an invalid location: ${JSON.stringify(location)}.`);
    }
    hops.push(`${url.href} → HTTP ${response.status} → ${next.href}`);
    if (next.protocol !== "http:" && next.protocol !== "https:") {
      return failure(`${url.href} redirected to ${next.href}: only http and https URLs are fetched.`);
    }
    if (hops.length > MAX_REDIRECTS) {
      return failure(`Too many redirects (more than ${MAX_REDIRECTS}), starting at ${start.href}:\n${hops.join("\n")}`);
    }
    url = next;
  }
}

async function describeResponse(
  response: Response,
  url: URL,
  hops: string[],
  context: ToolRunContext,
  settings: Settings,
  deadline: Deadline,
): Promise<ToolResult> {
  const contentType = response.headers.get("content-type");
  const type = mediaType(contentType);
  const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  const header = [`URL: ${url.href}`, ...(hops.length > 0 ? [`Redirects: ${hops.length}`] : []), `Status: ${status}`];
  if (type !== "" && textKind(type) === null) {
    await discardBody(response);
    return failure(
      `${header.join("\n")}\nContent-Type: ${type}\n\nRefused: ${type} is not text. web_fetch returns HTML, plain text, JSON and XML only.`,
    );
  }
  const body = await readCappedBody(response, settings.maxBytes);
  if (type === "" && body.bytes.includes(0)) {
    return failure(`${header.join("\n")}\n\nRefused: the response has no content type and looks binary.`);
  }
  context.onOutput("stdout", `HTTP ${status}, ${type || "no content type"}, ${body.bytes.length} bytes${body.truncated ? " (cut)" : ""}\n`);

  const raw = decode(body.bytes, charsetOf(contentType));
  const kind = type === "" ? "text" : textKind(type)!;
  let text = raw;
  let title: string | undefined;
  const notes: string[] = [];
  if (body.truncated) {
    notes.push(`[the body is larger than ${settings.maxBytes} bytes: reading stopped there, the text below is its start only]`);
  }
  if (kind === "html") {
    let page;
    try {
      page = await runOffThread(
        "html-page",
        { html: raw, maxTextChars: settings.maxOutputBytes },
        { timeoutMs: HTML_CONVERT_DEADLINE_MS, signal: deadline.signal },
      );
    } catch (error) {
      // The fetch's own limit or an interrupt: webFetch says which.
      if (!(error instanceof OffThreadError)) throw error;
      const why = error.kind === "timeout" ? `took over ${HTML_CONVERT_DEADLINE_MS} ms and was stopped` : `failed: ${error.message}`;
      return failure(`${header.join("\n")}\nContent-Type: ${type}\n\nConverting the page (${body.bytes.length} bytes of HTML) to Markdown ${why}.`);
    }
    text = page.markdown;
    title = page.title;
    notes.push(...page.notes);
  }

  const textBytes = Buffer.byteLength(text, "utf8");
  if (textBytes > settings.maxOutputBytes) {
    text = utf8Prefix(Buffer.from(text, "utf8"), settings.maxOutputBytes);
    notes.push(`[text cut to its first ${settings.maxOutputBytes} of ${textBytes} bytes]`);
  }
  const lines = [...header, ...(type ? [`Content-Type: ${type}`] : []), ...(title ? [`Title: ${title}`] : []), ...notes];
  return { success: response.ok, output: `${lines.join("\n")}\n\n${text}` };
}

/** How a media type is returned, or null for content that is not text. */
function textKind(type: string): "html" | "text" | null {
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type.startsWith("text/")) return "text";
  if (/^application\/([\w.+-]+\+)?(json|xml)$/.test(type)) return "text";
  if (/^application\/(javascript|ecmascript|x-javascript|x-ndjson|x-yaml|yaml|toml|x-sh|graphql|sql)$/.test(type)) return "text";
  if (type === "image/svg+xml") return "text";
  return null;
}

function decode(bytes: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    // An unknown charset label: UTF-8 shows most of such text correctly.
    return new TextDecoder("utf-8").decode(bytes);
  }
}

/** The URL, or an error line for the model. */
function httpUrl(address: string): URL | string {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return `Not a valid URL: ${JSON.stringify(address)}. Give an absolute http:// or https:// URL.`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `Only http:// and https:// URLs are fetched; ${JSON.stringify(address)} is a ${url.protocol} URL.`;
  }
  return url;
}

function positiveOr(value: number, fallback: number): number {
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function failure(output: string): ToolResult {
  return { success: false, output };
}
