/**
 * A URL shown without its password. Store and Redis URLs may carry one:
 * `agentwire config` shows them this way (SECRET_URL_CONFIG_PATHS), and so
 * does the start-up line (describeStore).
 */

/** The URL with its password replaced by `***`; a URL that does not parse is not echoed at all (it may hold one). */
export function redactPassword(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "postgres://… (a URL that does not parse)";
  }
  if (parsed.password) parsed.password = "***";
  for (const key of [...parsed.searchParams.keys()]) {
    if (/^(password|sslpassword)$/i.test(key)) parsed.searchParams.set(key, "***");
  }
  return parsed.toString();
}
