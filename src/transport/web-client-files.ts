/**
 * The web client's files (clients/web, bundled by `npm run build` into
 * dist/web) as the HTTP routes serve them. Only these fixed names are ever
 * read — no path from the request reaches the file system.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** URL path → file in the web dir, with its content type. */
export const WEB_FILES: Readonly<Record<string, { file: string; type: string }>> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/index.html": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
};

/**
 * The page may load only its own script and style and talk only to this
 * server ('self' covers ws:/wss: to the same host and port in current
 * browsers); it may not be framed (a framed approval button could be clickjacked).
 */
export const WEB_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Where dist/web is from this module: run from source (src/transport), from
 * tsc's output (dist/src/transport) or from the bundle (dist/bundle).
 */
const CANDIDATES = ["../../dist/web", "../../web", "../web"].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));

/** The first candidate holding a built index.html, or undefined when the client was never built. */
export async function findWebDir(candidates: readonly string[] = CANDIDATES): Promise<string | undefined> {
  for (const dir of candidates) {
    try {
      await readFile(join(dir, "index.html"));
      return dir;
    } catch {
      // next candidate
    }
  }
  return undefined;
}
