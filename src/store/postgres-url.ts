import { userInfo } from "node:os";

/**
 * What the server says about a PostgreSQL URL: where it points, with no
 * password (redactPassword, in src/config/url-password.ts). No pg import:
 * the CLI and the error messages use these before (or without) the driver
 * loading.
 */

/** A `--store` value naming PostgreSQL rather than the embedded store. */
export function isPostgresUrl(value: string | undefined): value is string {
  return value !== undefined && /^postgres(?:ql)?:\/\//i.test(value);
}

/**
 * The URL with the OS user name filled in when it names no user and neither
 * PGUSER nor USER is set (a service or a container often has no USER): psql
 * and libpq fall back to the OS user, node-postgres would send no user name
 * at all and be refused.
 */
export function withDefaultUser(url: string, env: NodeJS.ProcessEnv = process.env): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.username || parsed.searchParams.get("user") || env.PGUSER || env.USER) return url;
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    return url;
  }
  parsed.username = encodeURIComponent(name);
  return parsed.toString();
}

/**
 * `host:port/database` as the driver will read them, libpq's defaults
 * filled in (PGHOST, PGPORT, PGDATABASE, else localhost, 5432 and the user
 * name): what an operator needs to find the server that failed.
 */
export function describeTarget(url: string, env: NodeJS.ProcessEnv = process.env): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "(a URL that does not parse)";
  }
  const host = decodeURIComponent(parsed.hostname) || parsed.searchParams.get("host") || env.PGHOST || "localhost";
  const port = parsed.port || parsed.searchParams.get("port") || env.PGPORT || "5432";
  const user = decodeURIComponent(parsed.username) || env.PGUSER || env.USER || safeUserName();
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || env.PGDATABASE || user;
  return `${host}:${port}/${database}`;
}

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return "";
  }
}
