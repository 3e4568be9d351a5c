/**
 * Where the offload worker's code is, in each of the three forms the server
 * runs in, and how to start a thread on it:
 *
 * - the bundle (dist/bundle/*.mjs): esbuild builds the worker as its own
 *   entry point, `offload-worker.mjs`, beside every chunk of the bundle;
 * - tsc's output (dist/src/…/*.js, what the bench runs): `offload-worker.js`
 *   beside this file;
 * - the TypeScript source, under tsx or vitest: `offload-worker.ts` beside
 *   this file. Node cannot load .ts by itself, and tsx registers its loader
 *   in the main thread only, so the thread first registers tsx through its
 *   API and then imports the entry.
 *
 * Which one applies is read from this module's own file name, so nothing
 * probes the disk and a missing file fails loudly in the worker's start.
 */
import { extname } from "node:path";
import { fileURLToPath } from "node:url";

export const WORKER_ENTRY_NAME = "offload-worker";

export interface WorkerScript {
  /** What `new Worker()` is given: a file URL, or bootstrap code with `eval: true`. */
  script: URL | string;
  eval: boolean;
}

export function offloadWorkerScript(moduleUrl: string = import.meta.url): WorkerScript {
  return workerScript(WORKER_ENTRY_NAME, moduleUrl);
}

/**
 * The script of a worker whose entry `name` is its own entry point of the
 * bundle and, in the other two forms, a module beside `moduleUrl` (the
 * socket thread's too: src/transport/socket-thread.ts).
 */
export function workerScript(name: string, moduleUrl: string): WorkerScript {
  const ext = extname(fileURLToPath(moduleUrl));
  const entry = new URL(`./${name}${ext === ".mjs" ? ".mjs" : ext === ".js" ? ".js" : ".ts"}`, moduleUrl);
  if (ext === ".mjs" || ext === ".js") return { script: entry, eval: false };
  // From source: tsx is a development dependency, present wherever the source runs.
  const tsxUrl = import.meta.resolve("tsx/esm/api");
  const code =
    `import(${JSON.stringify(tsxUrl)})` +
    `.then((tsx) => tsx.register())` +
    `.then(() => import(${JSON.stringify(entry.href)}))`;
  return { script: code, eval: true };
}
