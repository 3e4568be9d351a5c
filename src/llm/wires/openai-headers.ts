/**
 * The URL and headers of the openai SDK's streaming POST, worked out without
 * loading the SDK (issue 27). The request sent direct (openai-direct.ts)
 * took them from the SDK's buildRequest, which meant loading the SDK's
 * client (most of the 263 KB chunk the OpenAI wires were bundled in) and the
 * `Headers` class its header code is built on, which Node loads (undici) at
 * its first use: together some 15–20 ms before a one-shot `agentwire chat`
 * could send its one model call.
 *
 * What the SDK does, for a client made as openai-client.ts makes it (key,
 * base URL, the provider's headers, its retries off) and a JSON body: it
 * merges, in this order, its own headers (Accept, User-Agent, retry count,
 * the X-Stainless-* platform headers, OpenAI-Organization / -Project from
 * OPENAI_ORG_ID / OPENAI_PROJECT_ID), the key's Authorization, the
 * provider's headers and the body's content-type, each given as an object,
 * whose every key replaces what came before under its name (names compare
 * case-insensitively; a null value removes the header). `Headers` then
 * lists them lowercase, sorted by name.
 *
 * Worked out here only when that is all there is to it. Anything else — a
 * header value `Headers` would trim or refuse, a name the SDK refuses,
 * set-cookie (listed once per value), OPENAI_CUSTOM_HEADERS, a base URL
 * with a query, no Authorization left, a runtime other than Node, or a
 * platform or architecture not in the tables below — answers undefined, and
 * the caller asks the SDK itself. test/llm/openai-headers.test.ts holds
 * each case against the SDK's own answer.
 */
import { VERSION } from "openai/version";

/** The SDK's X-Stainless-OS for Node's process.platform (only these; any other: ask the SDK). */
const OS_NAMES: Readonly<Record<string, string>> = { linux: "Linux", darwin: "MacOS", win32: "Windows", freebsd: "FreeBSD", openbsd: "OpenBSD" };
/** The SDK's X-Stainless-Arch for Node's process.arch (only these; any other: ask the SDK). */
const ARCH_NAMES: Readonly<Record<string, string>> = { x64: "x64", arm64: "arm64", arm: "arm" };

/** A name the SDK accepts (it throws a TypeError for any other). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A value `Headers` keeps as it is: printable ASCII, no space at either end (empty is fine). */
const PLAIN_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

export interface SdkRequestInputs {
  apiKey: string;
  baseURL: string;
  headers?: Record<string, string>;
}

export interface SdkRequest {
  url: URL;
  /** Lowercase names in sorted order, as they go on the wire. */
  headers: Record<string, string>;
}

/** As the SDK reads a variable: trimmed, an empty one as unset. */
function readEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return env[name]?.trim() || undefined;
}

/**
 * The SDK's POST to `path` with a JSON body, or undefined when only the SDK
 * can say (see above). `env`, `platform`, `arch` and `version` are the
 * process's own unless a test passes others.
 */
export function sdkRequestWithoutSdk(
  inputs: SdkRequestInputs,
  path: string,
  { env = process.env, platform = process.platform as string, arch = process.arch as string, version = process.version } = {},
): SdkRequest | undefined {
  // The SDK detects Deno and edge runtimes first, and names its runtime "node" only for Node's process object.
  const global = globalThis as { Deno?: unknown; EdgeRuntime?: unknown };
  if (global.Deno !== undefined || global.EdgeRuntime !== undefined) return undefined;
  if (Object.prototype.toString.call(globalThis.process) !== "[object process]") return undefined;
  const os = Object.hasOwn(OS_NAMES, platform) ? OS_NAMES[platform] : undefined;
  const cpu = Object.hasOwn(ARCH_NAMES, arch) ? ARCH_NAMES[arch] : undefined;
  if (!os || !cpu || readEnv(env, "OPENAI_CUSTOM_HEADERS") !== undefined) return undefined;
  const { baseURL } = inputs;
  if (/[?#]/.test(baseURL)) return undefined; // the SDK re-encodes a query it finds there
  const groups: Record<string, string | null>[] = [
    {
      accept: "application/json",
      "user-agent": `OpenAI/JS ${VERSION}`,
      "x-stainless-retry-count": "0",
      "x-stainless-lang": "js",
      "x-stainless-package-version": VERSION,
      "x-stainless-os": os,
      "x-stainless-arch": cpu,
      "x-stainless-runtime": "node",
      "x-stainless-runtime-version": version ?? "unknown",
      "openai-organization": readEnv(env, "OPENAI_ORG_ID") ?? null,
      "openai-project": readEnv(env, "OPENAI_PROJECT_ID") ?? null,
    },
    { authorization: `Bearer ${inputs.apiKey}` },
    inputs.headers ?? {},
    { "content-type": "application/json" },
  ];
  const merged = new Map<string, string>();
  for (const group of groups) {
    for (const [name, value] of Object.entries(group)) {
      if (value === undefined) continue;
      // An array (several values) is the SDK's to merge; so is anything not plainly a string.
      if (!TOKEN.test(name) || (value !== null && (typeof value !== "string" || !PLAIN_VALUE.test(value)))) return undefined;
      const lower = name.toLowerCase();
      if (lower === "set-cookie") return undefined;
      if (value === null) merged.delete(lower);
      else merged.set(lower, value);
    }
  }
  // The SDK refuses to send without one of them (its validateHeaders): let it say so.
  if (!merged.get("authorization") && !merged.get("api-key")) return undefined;
  const headers: Record<string, string> = {};
  for (const name of [...merged.keys()].sort()) headers[name] = merged.get(name)!;
  const url = new URL(baseURL + (baseURL.endsWith("/") && path.startsWith("/") ? path.slice(1) : path));
  return { url, headers };
}
