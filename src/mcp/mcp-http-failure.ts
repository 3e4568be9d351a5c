/**
 * What went wrong reaching an MCP server over Streamable HTTP, in words a
 * user can act on. The SDK reports a refused connection, a DNS failure and
 * a reset alike as "fetch failed", an HTTP status as a number beside the
 * response body, and a page that is not MCP as a content-type complaint or a
 * zod dump; McpSession watches the requests (HttpExchange) and this file
 * turns what it saw into one line. The server is named by host and port
 * only: a URL's path or query may hold a token.
 */
import { STATUS_CODES } from "node:http";

/** What McpSession saw of its HTTP requests, through the fetch it hands the SDK. */
export interface HttpExchange {
  /** The last response received (status line and content type). */
  response?: { status: number; statusText: string; contentType: string | null };
  /** Requests sent that have no response yet (one aborted before its response stays counted: it was never answered). */
  pending: number;
}

/** Longest piece of a response body quoted in a message. */
const BODY_QUOTE_CHARS = 200;

/** Network-level causes, by the code Node's fetch (undici) or the OS gives them. */
export function describeFetchFailure(error: unknown, url: URL): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const cause = (error as { cause?: unknown }).cause;
  const code = causeCode(cause) ?? causeCode(error);
  const where = url.host;
  const detail = cause instanceof Error && cause.message ? cause.message : error.message;
  switch (code) {
    case "ECONNREFUSED":
      return `connection refused by ${where} (nothing is listening there: is the MCP server running, and is the port right?)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_FAIL":
    case "EAI_NONAME":
      return `could not resolve host "${url.hostname}" (DNS: ${code})`;
    case "ECONNRESET":
    case "EPIPE":
    case "UND_ERR_SOCKET":
    case "UND_ERR_CLOSED":
      return `${where} closed the connection without an HTTP answer (${code})`;
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return `connecting to ${where} timed out (${code})`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${where} is unreachable from here (${code})`;
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
      return `${where} stopped answering mid-request (${code})`;
  }
  if (typeof code === "string" && /CERT|SSL|TLS/i.test(code)) return `TLS with ${where} failed: ${detail} (${code})`;
  if (/bad port/i.test(detail)) return `port ${url.port} is one fetch refuses to use (a "bad port"); serve the MCP server on another port`;
  if (error.message === "fetch failed") return `could not reach ${where}: ${detail}${code ? ` (${code})` : ""}`;
  return undefined;
}

/**
 * An HTTP error status: the status with its text, the body's first words
 * when it is text (not an HTML page), and a hint for the statuses a user
 * can fix from here.
 */
export function describeHttpStatus(status: number, exchange: HttpExchange, body: string | undefined, url: URL): string {
  const seen = exchange.response?.status === status ? exchange.response : undefined;
  const statusText = seen?.statusText || STATUS_CODES[status] || "";
  const head = `HTTP ${status}${statusText ? ` ${statusText}` : ""} from ${url.host}`;
  const hint = STATUS_HINTS[status];
  const quoted = quoteBody(body, seen?.contentType ?? null, statusText);
  return `${head}${quoted ? `: ${quoted}` : ""}${hint ? ` (${hint})` : ""}`;
}

/** An answer to initialize that is not MCP: a web page, or JSON that is not JSON-RPC. */
export function describeNotMcp(exchange: HttpExchange, url: URL, what: "content-type" | "message"): string {
  const response = exchange.response;
  const status = response ? ` (HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""})` : "";
  if (what === "content-type") {
    const type = response?.contentType?.split(";")[0]?.trim() || "no content type";
    return `not an MCP endpoint: ${url.host} answered initialize with ${type}${status}, not JSON or an event stream (check the URL: it must be the server's MCP endpoint, often ending in /mcp)`;
  }
  return `not an MCP endpoint: ${url.host} answered initialize${status} with something that is not a JSON-RPC message`;
}

const STATUS_HINTS: Record<number, string> = {
  400: "the server refused the request: is the URL an MCP endpoint?",
  401: "the server wants credentials: give them in the definition's headers, e.g. Authorization",
  403: "the credentials in headers are not allowed to use this server",
  404: "no MCP endpoint at this path: check the URL, often it ends in /mcp",
  405: "the path does not take POST requests: it is not a Streamable HTTP MCP endpoint (an old SSE-only server?)",
  406: "the server does not speak Streamable HTTP",
  415: "the server does not speak Streamable HTTP",
  429: "the server is rate limiting; it is retried later",
  502: "a proxy in front of the MCP server could not reach it",
  503: "the server is unavailable for now; it is retried later",
  504: "a proxy in front of the MCP server timed out",
};

function quoteBody(body: string | undefined, contentType: string | null, statusText: string): string | undefined {
  if (!body) return undefined;
  if (/html/i.test(contentType ?? "") || /^\s*<(!doctype|html)/i.test(body)) return "an HTML page";
  const text = body.replace(/\s+/g, " ").trim();
  if (text === "" || text === statusText) return undefined;
  return text.length > BODY_QUOTE_CHARS ? `${text.slice(0, BODY_QUOTE_CHARS)}…` : text;
}

function causeCode(value: unknown): string | undefined {
  if (!value || typeof value !== "object") return undefined;
  const code = (value as { code?: unknown }).code;
  if (typeof code === "string") return code;
  // Node 20 reports a refused "localhost" (tried ::1 and 127.0.0.1) as an AggregateError: read its members.
  const errors = (value as { errors?: unknown }).errors;
  if (Array.isArray(errors)) for (const member of errors) if (typeof member?.code === "string") return member.code;
  return undefined;
}
