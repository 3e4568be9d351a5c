/**
 * One HTTP GET whose connection goes only where the NetworkPolicy allows,
 * answered as a web Response so the rest of web_fetch reads it as it would
 * read fetch's. Node's fetch cannot be given a DNS lookup of our own (its
 * dispatcher is undici's, not importable here), so this is http.request
 * with the policy's `lookup`: the address checked is the address used.
 *
 * One request, no redirect following (the caller follows them, each hop a
 * new guarded request), no connection reuse (a pooled socket would skip
 * the check), gzip and brotli bodies decoded as fetch does.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { Readable, pipeline } from "node:stream";
import { createBrotliDecompress, createGunzip } from "node:zlib";
import type { NetworkPolicy } from "./private-network.js";

export interface GuardedGetOptions {
  policy: NetworkPolicy;
  /** Aborting it ends the request, or the body being read. */
  signal: AbortSignal;
  headers: Record<string, string>;
}

/** Statuses a Response cannot carry a body with. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** GETs `url` (http or https); rejects with PrivateAddressRefused when the policy refuses where it leads. */
export function guardedGet(url: URL, options: GuardedGetOptions): Promise<Response> {
  const { policy, signal } = options;
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const https = url.protocol === "https:";
  const port = url.port ? Number(url.port) : https ? 443 : 80;
  if (isIP(host) !== 0) {
    // Node connects to a literal without a lookup: the literal is the address used.
    const refused = policy.refusal(host, port, host);
    if (refused) return Promise.reject(refused);
  }
  if (signal.aborted) return Promise.reject(signal.reason);

  return new Promise<Response>((resolve, reject) => {
    let response: IncomingMessage | undefined;
    let body: Readable | undefined;
    const request = (https ? httpsRequest : httpRequest)({
      protocol: url.protocol,
      hostname: host,
      port,
      path: `${url.pathname}${url.search}`,
      method: "GET",
      headers: { host: url.host, "accept-encoding": "gzip, br", ...options.headers },
      lookup: policy.lookup(host, port),
      agent: false,
    });
    const onAbort = () => {
      const reason = signal.reason instanceof Error ? signal.reason : new Error("aborted");
      request.destroy(reason);
      body?.destroy(reason);
      response?.destroy(reason);
      reject(reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    const settle = () => signal.removeEventListener("abort", onAbort);

    request.on("error", (error) => {
      settle();
      reject(error);
    });
    request.on("response", (res) => {
      response = res;
      res.once("close", settle);
      // Its errors reach the reader through the body stream; unheard here they would crash the process.
      res.on("error", () => {});
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 599) {
        res.destroy();
        reject(new Error(`the server answered with HTTP status ${status}, which is not a valid final status`));
        return;
      }
      const headers = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
        try {
          headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        } catch {
          // A header value Headers will not hold: fetch would drop it as well.
        }
      }
      body = NULL_BODY_STATUSES.has(status) ? undefined : decoded(res);
      if (!body) res.resume();
      let statusText = res.statusMessage ?? "";
      if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(statusText)) statusText = "";
      resolve(new Response(body ? (Readable.toWeb(body) as ReadableStream<Uint8Array>) : null, { status, statusText, headers }));
    });
    request.end();
  });
}

/** The body as sent, or decoded when it is gzip or brotli (what accept-encoding asked for). */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "").trim().toLowerCase();
  const decoder = encoding === "gzip" || encoding === "x-gzip" ? createGunzip() : encoding === "br" ? createBrotliDecompress() : null;
  if (!decoder) return res;
  // pipeline: cancelling the decoded stream destroys the response (and its socket) too.
  return pipeline(res, decoder, () => {});
}
