/**
 * `agentwire trust [DIR]`, `agentwire trust --list`, `agentwire trust
 * --revoke [DIR]`: the user's say-so that a project agentwire.json, as it is
 * now, may run commands and send credentials (config-trust.ts). The file is
 * read and checked exactly as the server would read it, so what is trusted
 * is what will be applied.
 */
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { TRUST_REQUIRED_CONFIG_PATHS } from "../../protocol/config-trust-paths.js";
import { UsageError } from "../usage-error.js";
import { CONFIG_FILE_NAME, realpathOr } from "./config-discovery.js";
import { loadConfigFile } from "./config-file.js";
import { directoryProblem } from "./config-place.js";
import { trustRequiredPathsIn } from "./config-trust.js";
import { TrustStore, trustStorePath } from "./trust-store.js";

export interface TrustArgs {
  action: "trust" | "list" | "revoke";
  /** DIR (its agentwire.json) or the file itself, as given; default the working directory. */
  target?: string;
}

/** Where the command runs (the CLI passes its own; tests may pass others). */
export interface TrustPlace {
  cwd?: string;
  home?: string;
  env: NodeJS.ProcessEnv;
}

/** `agentwire trust [DIR] [--list | --revoke]` (src/cli-program.ts declares the flags). */
export function trustArgs(dir: string | undefined, values: { list?: boolean; revoke?: boolean }): TrustArgs {
  if (values.list && values.revoke) throw new UsageError("trust: --list and --revoke go alone");
  if (values.list && dir !== undefined) throw new UsageError("trust --list takes no DIR");
  return { action: values.list ? "list" : values.revoke ? "revoke" : "trust", target: dir };
}

/** A trust that cannot be given, with the reason; the CLI prints it and exits 2. */
export class TrustRefused extends Error {}

/** Runs the command, writing what it did to `out`. Throws UsageError, TrustRefused or ConfigFileError (a file that cannot be read). */
export function runTrust(args: TrustArgs, place: TrustPlace, out: (line: string) => void): void {
  const store = TrustStore.load(trustStorePath(place.env, place.home));
  if (args.action === "list") return listTrust(store, out);
  const file = targetFile(args.target, place, args.action);
  if (args.action === "revoke") {
    out(store.revoke(file) ? `no longer trusted: ${file}` : `${file} was not trusted; nothing to revoke`);
    return;
  }
  if (!existsSync(file)) throw new TrustRefused(`there is no ${CONFIG_FILE_NAME} in ${dirname(file)}`);
  const home = realpathOr(resolve(place.home ?? homedir()));
  const dir = dirname(file);
  if (dir !== home && home.startsWith(dir === "/" ? dir : `${dir}/`)) {
    throw new TrustRefused(`${dir} is above your home directory (${home}), where agentwire never reads configuration`);
  }
  const problem = directoryProblem(dir);
  if (problem) throw new TrustRefused(`${dir} is ${problem}, so agentwire never reads configuration from it; fix that first (chmod go-w, or chown)`);
  const loaded = loadConfigFile(file, { checkOwner: true });
  if (loaded.ignored !== undefined) throw new TrustRefused(`${file} cannot be trusted: ${loaded.ignored}`);
  store.trust(file, loaded.sha256);
  const gated = trustRequiredPathsIn(loaded.values as Record<string, unknown>);
  out(`trusted ${file} as it is now (sha256 ${loaded.sha256.slice(0, 12)}…)`);
  if (gated.length === 0) {
    out("  it sets nothing that runs commands or sends credentials today");
  } else {
    out("  these now apply:");
    const width = Math.max(...gated.map((p) => p.length));
    for (const path of gated) {
      const entry = TRUST_REQUIRED_CONFIG_PATHS.find((e) => e.path === path)!;
      out(`    ${path.padEnd(width)}  ${entry.reason}: ${entry.what}`);
    }
  }
  out(`recorded in ${store.path}; any change to the file asks again (agentwire trust --revoke to undo)`);
}

/** DIR → DIR/agentwire.json; a path to an agentwire.json stays; the real path, as discovery records it. */
function targetFile(target: string | undefined, place: TrustPlace, action: TrustArgs["action"]): string {
  const given = resolve(place.cwd ?? process.cwd(), target ?? ".");
  let isDir = false;
  try {
    isDir = statSync(given).isDirectory();
  } catch {
    // A file that is gone can still be revoked; nothing else can be done with it.
    if (action !== "revoke") throw new TrustRefused(`${given} does not exist`);
  }
  const file = isDir ? join(given, CONFIG_FILE_NAME) : given;
  if (basename(file) !== CONFIG_FILE_NAME) throw new UsageError(`trust takes a directory (or its ${CONFIG_FILE_NAME}), got ${target}`);
  // The directory's real path even when the file is gone (revoke), then the file's own (a linked agentwire.json).
  return realpathOr(join(realpathOr(dirname(file)), CONFIG_FILE_NAME));
}

function listTrust(store: TrustStore, out: (line: string) => void): void {
  const entries = store.entries();
  if (entries.length === 0) {
    out(`no trusted configuration files (${store.path})`);
    return;
  }
  for (const [file, entry] of entries) {
    let state: string;
    try {
      const loaded = loadConfigFile(file, { checkOwner: true });
      state = loaded.ignored !== undefined ? `not read: ${loaded.ignored}` : store.verdict(file, loaded.sha256) === "trusted" ? "unchanged" : "CHANGED since (asks again)";
    } catch (error) {
      state = existsSync(file) ? `cannot be read: ${(error as Error).message}` : "gone";
    }
    out(`${file}  trusted ${entry.trustedAt}; ${state}`);
  }
}
