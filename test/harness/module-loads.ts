/**
 * Which ES modules a child process loaded: `recordModuleLoads(file)` is the
 * environment that preloads record-module-loads.mjs into it (and its worker
 * threads), and `loadedModules(file)` reads back the paths of every module
 * the processes started with it loaded.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const RECORDER = new URL("./record-module-loads.mjs", import.meta.url).href;

/** Environment for runCli: the process appends each module it loads to `file`. */
export function recordModuleLoads(file: string): Record<string, string> {
  return { NODE_OPTIONS: `--import=${RECORDER}`, AGENTWIRE_TEST_MODULE_LOADS: file };
}

/** The file paths recorded in `file` (empty when no process recorded anything). */
export async function loadedModules(file: string): Promise<Set<string>> {
  const text = await readFile(file, "utf8").catch(() => "");
  return new Set(
    text
      .split("\n")
      .filter((url) => url.startsWith("file:"))
      .map((url) => fileURLToPath(url)),
  );
}
