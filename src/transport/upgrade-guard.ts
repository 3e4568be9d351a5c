/**
 * Who may open a WebSocket. A local agent runs shell commands, so a web
 * page on another site must never reach it: browser Origins are checked
 * against an allow list, and a token (when configured) must come with the
 * upgrade — as `Authorization: Bearer`, `?token=`, or, for browsers, which
 * cannot set headers, a `Sec-WebSocket-Protocol` entry `bearer.<token>`.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const TOKEN_PROTOCOL_PREFIX = "bearer.";

export interface GuardOptions {
  token?: string;
  /** Origins allowed besides the server's own. */
  allowOrigins: readonly string[];
  /**
   * The server's own origins, from the address it is bound to — never from
   * the request's Host header, which a DNS-rebinding page controls.
   */
  ownOrigins: readonly string[];
}

export type GuardVerdict = { ok: true } | { ok: false; status: 400 | 401 | 403; reason: string };

export function checkUpgrade(request: IncomingMessage, options: GuardOptions): GuardVerdict {
  const origin = request.headers.origin;
  if (origin !== undefined && !originAllowed(origin, options)) {
    return { ok: false, status: 403, reason: `origin ${origin} is not allowed (see --allow-origin)` };
  }
  if (options.token !== undefined && !tokenMatches(presentedTokens(request), options.token)) {
    return { ok: false, status: 401, reason: "a valid token is required" };
  }
  const offered = request.headers["sec-websocket-protocol"];
  if (offered && offered.split(",").every((p) => p.trim().startsWith(TOKEN_PROTOCOL_PREFIX))) {
    // The token entry is never echoed back, and a client that offered protocols
    // aborts when none is selected: say so instead of failing obscurely.
    return { ok: false, status: 400, reason: `offer a subprotocol such as "agentwire.v1" next to "${TOKEN_PROTOCOL_PREFIX}<token>"` };
  }
  return { ok: true };
}

const normalizeOrigin = (origin: string) => origin.trim().toLowerCase().replace(/\/$/, "");

function originAllowed(origin: string, options: GuardOptions): boolean {
  const normalized = normalizeOrigin(origin);
  return [...options.ownOrigins, ...options.allowOrigins].some((a) => normalizeOrigin(a) === normalized);
}

/** http(s)://host:port for each name the bound address is known by (loopback has three). */
export function ownOriginsFor(host: string, port: number): string[] {
  const bare = host.replace(/^\[|\]$/g, "");
  const names = new Set([bare.includes(":") ? `[${bare}]` : bare]);
  if (isLoopbackName(bare)) for (const n of ["127.0.0.1", "localhost", "[::1]"]) names.add(n);
  return [...names].flatMap((n) => [`http://${n}:${port}`, `https://${n}:${port}`]);
}

function isLoopbackName(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

function presentedTokens(request: IncomingMessage): string[] {
  const tokens: string[] = [];
  const auth = request.headers.authorization;
  if (auth?.toLowerCase().startsWith("bearer ")) tokens.push(auth.slice(7).trim());
  const query = new URL(request.url ?? "/", "http://x").searchParams.get("token");
  if (query) tokens.push(query);
  const protocols = request.headers["sec-websocket-protocol"];
  if (protocols) {
    for (const p of protocols.split(",")) {
      const entry = p.trim();
      if (entry.startsWith(TOKEN_PROTOCOL_PREFIX)) tokens.push(entry.slice(TOKEN_PROTOCOL_PREFIX.length));
    }
  }
  return tokens;
}

/** True when the request carries the token in any of the ways an upgrade may (for plain HTTP routes behind the same token). */
export function requestHasToken(request: IncomingMessage, token: string): boolean {
  return tokenMatches(presentedTokens(request), token);
}

function tokenMatches(presented: string[], expected: string): boolean {
  const want = Buffer.from(expected);
  return presented.some((t) => {
    const got = Buffer.from(t);
    return got.length === want.length && timingSafeEqual(got, want);
  });
}

/**
 * Pick the subprotocol to answer with: never echo the token entry; a
 * browser that offered protocols needs one of them answered.
 */
export function selectProtocol(offered: Set<string>): string | false {
  for (const p of offered) if (!p.startsWith(TOKEN_PROTOCOL_PREFIX)) return p;
  return false;
}
