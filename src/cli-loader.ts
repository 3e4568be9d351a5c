#!/usr/bin/env node
/**
 * The `agentwire` bin (dist/bundle/cli.cjs, built as CommonJS: src/build/bundle.ts
 * says why): runs the command line
 * (src/cli.ts, dist/bundle/cli-main.mjs) from the CommonJS twins of the
 * bundle's files (src/build/commonjs-twins.ts says why) through V8's code
 * cache. Each twin is compiled with the bytecode an earlier run of this
 * bundle, on this Node, wrote for it; a twin that had none (or whose cache V8
 * refused) has its cache written once the process has run a second, or at
 * its exit if that comes first and is a success. A cache holds the functions
 * compiled when it was written, so a command that runs to its end writes a
 * cache again at its exit when the cache is less than its run compiled
 * (writeCaches); a server command keeps its first second's. The cache lives in the bundle's
 * `.code-cache` directory, or in the one AGENTWIRE_CODE_CACHE names (`off`:
 * none); a directory that cannot be written only means no cache, and one
 * that other users can write to is not used (usable).
 *
 * Imports only Node's modules: this file is all that runs before the twins.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { CLI_MAIN, TWIN_MANIFEST, twinName } from "./cli-twin-names.js";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The URLs of the bundle's files run from their twins, in order (the ES
 * modules', as a module hook would see them), after this bin's own (which,
 * CommonJS, no module hook sees either): a preload may put its own list here
 * first (test/harness/record-module-loads.mjs does).
 */
const LOADED = Symbol.for("agentwire.cjs-twins.loaded");
const loaded = ((globalThis as Record<symbol, unknown>)[LOADED] ??= []) as { push(url: string): unknown };
loaded.push(import.meta.url);

/**
 * Whether `dir` may hold the cache. Bytecode read from it runs as this
 * process's code, so a directory another user could write to is not used:
 * one with the group's or others' write bit, or owned by another user than
 * this one or root. A missing one is made, for this user alone, when the
 * cache is first written.
 */
function usable(dir: string): boolean {
  try {
    const found = statSync(dir);
    if (process.platform === "win32") return found.isDirectory();
    return found.isDirectory() && (found.mode & 0o022) === 0 && (found.uid === 0 || found.uid === process.getuid!());
  } catch {
    return true; // missing (or unreadable, and then unwritable too)
  }
}

const setting = process.env.AGENTWIRE_CODE_CACHE;
const wanted = setting === "off" ? undefined : setting ? setting : join(here, ".code-cache");
const cacheDir = wanted && usable(wanted) ? wanted : undefined;

/**
 * What V8 checks a cache against besides the source: its version and its
 * flags. Node's version stands for V8's; the flags are the process's own
 * (a cache written under other flags is refused, so each set keeps its own).
 */
function flagsKey(): string {
  const flags = `${process.execArgv.join(" ")}|${process.env.NODE_OPTIONS ?? ""}`;
  let hash = 0x811c9dc5; // FNV-1a, 32 bits: a name, not a check
  for (let i = 0; i < flags.length; i++) hash = Math.imul(hash ^ flags.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(36);
}
/**
 * The command (`serve`, `chat`, …): each keeps a cache of its own, since a
 * cache holds the bytecode of the functions the run that wrote it compiled,
 * and the files every command loads (the command line's) would otherwise hold
 * only the first command's (a one-shot chat took ~10 ms more from serve's).
 */
const command = /^[a-z]{1,16}$/.test(process.argv[2] ?? "") ? process.argv[2]! : "-";
const cacheSuffix = `${command}-${process.version}-${process.arch}-${flagsKey()}.cache`;

const manifest = JSON.parse(readFileSync(join(here, TWIN_MANIFEST), "utf8")) as Record<string, string>;

interface Twin {
  module: { exports: unknown };
  script: Script;
  cacheFile?: string;
  /** Whether it ran from an accepted cache (or its cache was written since). */
  cached: boolean;
  /** How many twins the run that wrote its cache had loaded when it wrote it (0: no cache). */
  writerLoaded: number;
  /** Its cache was written by this run before its end (the timer below). */
  early?: boolean;
}
const twins = new Map<string, Twin>();

function cacheFileOf(name: string): string | undefined {
  return cacheDir && `${join(cacheDir, `${name}-${manifest[name]}-`)}${cacheSuffix}`;
}

/**
 * A cache file: the number of twins its writer had loaded (4 bytes,
 * little-endian), then V8's cache. The bytes are the file's own, not copied.
 */
const CACHE_HEADER_BYTES = 4;

function readCache(file: string | undefined): { data: Buffer; writerLoaded: number } | undefined {
  if (!file) return undefined;
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined; // none yet
  }
  if (bytes.length <= CACHE_HEADER_BYTES) return undefined;
  return { data: bytes.subarray(CACHE_HEADER_BYTES), writerLoaded: bytes.readUInt32LE(0) };
}

/** The exports of the bundle's file `name` (`x.mjs`), run from its twin the first time. */
function load(name: string): unknown {
  const known = twins.get(name);
  if (known) return known.module.exports;
  if (!(name in manifest)) throw new Error(`agentwire: the bundle has no twin of ${name} (rebuild it: npm run bundle)`);
  const file = join(here, twinName(name));
  const cacheFile = cacheFileOf(name);
  const cache = readCache(cacheFile);
  // The twin is the function expression itself (src/build/commonjs-twins.ts), called with cli-twin-names.ts TWIN_PARAMETERS.
  const script = new Script(readFileSync(file, "utf8"), { filename: file, cachedData: cache?.data });
  const cached = cache !== undefined && !script.cachedDataRejected;
  const twin: Twin = { module: { exports: {} }, script, cacheFile, cached, writerLoaded: cached ? cache.writerLoaded : 0 };
  twins.set(name, twin);
  const url = pathToFileURL(join(here, name)).href;
  loaded.push(url);
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run(twin.module.exports, requireOf(name), twin.module, { url, resolve: (id: string) => import.meta.resolve(id) }, dynamicImport);
  return twin.module.exports;
}

/** A twin's `require`: the bundle's files from their twins, anything else (Node's modules, bufferutil) from Node. */
function requireOf(name: string): (id: string) => unknown {
  const fromNode = createRequire(join(here, name));
  return (id) => (isBundleFile(id) ? load(id.slice(2)) : fromNode(id));
}

const isBundleFile = (id: string) => id.startsWith("./") && id.endsWith(".mjs") && !id.includes("/", 2);

/** A twin's `import()`: the bundle's files from their twins, anything else by Node's own import(), from this directory. */
function dynamicImport(id: string): Promise<unknown> {
  if (typeof id === "string" && isBundleFile(id)) return Promise.resolve().then(() => load(id.slice(2)));
  return import(typeof id === "string" && id.startsWith("./") ? new URL(id, import.meta.url).href : id);
}

/**
 * The commands that run until they are stopped: their cache is what their
 * first second compiled (start-up and the first requests), as the timer below
 * writes it. Written at their exit instead, it would hold all they ever ran:
 * serve's start file's grew from 311 to 510 KB after one turn, and its next
 * start took 122.0 ms to its listening line against 117.4 (medians of 20).
 */
const SERVING = new Set(["serve", "acp"]);

let writing = false;
/**
 * Writes the cache of every twin that ran without one. At the successful
 * exit (`atExit`) of a command that runs to its end, also of every twin whose
 * cache holds less than this run compiled: one this run's timer wrote, or one
 * written by a run that had loaded fewer of the bundle's files. A run that
 * accepts a cache compiles what it lacks itself, every time: a cache of the
 * chat command's serve-start written by a `chat --url` (which loaded it then)
 * held 241 of the 507 KB a one-shot with its own server compiles, and every
 * one-shot after it took ~10 ms more; so would a REPL's, written a second in.
 * Runs that load as many files leave each other's caches.
 */
function writeCaches(atExit: boolean): void {
  const loadedNow = twins.size;
  const richer = atExit && !SERVING.has(command);
  const pending = [...twins.values()].filter(
    (twin): twin is Twin & { cacheFile: string } =>
      (!twin.cached || (richer && (twin.early === true || twin.writerLoaded < loadedNow))) && twin.cacheFile !== undefined,
  );
  // Nothing to write (every twin ran from its cache, or none ran): not even the directory is touched.
  if (writing || !cacheDir || pending.length === 0) return;
  writing = true;
  try {
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    const header = Buffer.alloc(CACHE_HEADER_BYTES);
    header.writeUInt32LE(loadedNow, 0);
    for (const twin of pending) {
      twin.cached = true;
      twin.writerLoaded = loadedNow;
      twin.early = !atExit;
      // Whole or not at all: another process may read it meanwhile.
      const temporary = `${twin.cacheFile}.${process.pid}`;
      try {
        writeFileSync(temporary, Buffer.concat([header, twin.script.createCachedData()]));
        renameSync(temporary, twin.cacheFile);
      } catch {
        rmSync(temporary, { force: true });
      }
    }
  } catch {
    // Not writable (a read-only install): the bundle runs as it would without the cache.
  } finally {
    writing = false;
  }
}

// A second: serve's start-up has run by then (its listening line), and what its
// first requests compile is in the cache too; a one-shot command writes at its exit.
setTimeout(() => writeCaches(false), 1000).unref();
// Not for a run that failed (a mistyped command would leave a cache of its own).
process.on("exit", (code) => {
  if (code === 0) writeCaches(true);
});

if (process.sourceMapsEnabled) {
  // --enable-source-maps: Node 20 maps no stack frame of a vm.Script, so the ES modules run, as the bundle ran
  // before the twins, and their maps point stacks into src/ (at the cost of the start the cache saves).
  // Not awaited (the bin is CommonJS): a failure to load is an unhandled rejection, which ends the process with code 1.
  void import(new URL(CLI_MAIN, import.meta.url).href);
} else {
  load(CLI_MAIN);
}
