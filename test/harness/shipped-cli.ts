/**
 * For a test file whose children run the shipped CLI (dist/bundle/cli.cjs, built from the current
 * source by the global setup): the bundle is checked once before the file's tests, and every child
 * started through the returned function is killed after them.
 */
import { afterAll, beforeAll } from "vitest";
import { killAllCli, runCli } from "./cli-process.js";
import { shippedBundle } from "./shipped-bundle.js";

export function useShippedCli(): (args: string[], env: Record<string, string>, cwd: string) => ReturnType<typeof runCli> {
  let entry = "";
  beforeAll(() => {
    entry = shippedBundle();
  });
  afterAll(async () => {
    await killAllCli();
  });
  return (args, env, cwd) => runCli(args, env, entry, cwd);
}
