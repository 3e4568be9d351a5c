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
}

export type GuardVerdict = { ok: true } | { ok: false; status: 401 | 403; reason: string };

export function checkUpgrade(request: IncomingMessage, options: GuardOptions): GuardVerdict {
  const origin = request.headers.origin;
  if (origin !== undefined && !originAllowed(origin, request.headers.host, options.allowOrigins)) {
    return { ok: false, status: 403, reason: `origin ${origin} is not allowed (see --allow-origin)` };
  }
  if (options.token !== undefined && !tokenMatches(presentedTokens(request), options.token)) {
    return { ok: false, status: 401, reason: "a valid token is required" };
  }
  return { ok: true };
}

/** The server's own origin (same host:port as the request was sent to) is always allowed. */
function originAllowed(origin: string, host: string | undefined, allowed: readonly string[]): boolean {
  const normalized = origin.toLowerCase().replace(/\/$/, "");
  if (allowed.some((a) => a.toLowerCase().replace(/\/$/, "") === normalized)) return true;
  if (!host) return false;
  return normalized === `http://${host.toLowerCase()}` || normalized === `https://${host.toLowerCase()}`;
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
