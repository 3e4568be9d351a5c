/**
 * The trust list (src/config/trust-store.ts) is read at every start that
 * finds a project's agentwire.json, and checked by hand rather than with zod
 * (so that start loads no zod): what `save` writes is read back; anything
 * else, a key too many or missing, a wrong version, a malformed hash, is
 * refused with one message naming the file and what to do.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ConfigFileError } from "../../src/config/config-file.js";
import { TrustStore } from "../../src/config/trust-store.js";

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-trust-store-"));
  path = join(dir, "trusted-configs.json");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const HASH = "a".repeat(64);
const entry = { sha256: HASH, trustedAt: "2026-11-27T00:00:00.000Z" };

it("reads back what it wrote, and an absent list is empty", async () => {
  expect(TrustStore.load(path).entries()).toEqual([]);
  const store = TrustStore.load(path);
  store.trust("/p/agentwire.json", HASH);
  store.trust("/q/agentwire.json", "b".repeat(64));
  const again = TrustStore.load(path);
  expect(again.entries().map(([file, e]) => [file, e.sha256])).toEqual([
    ["/p/agentwire.json", HASH],
    ["/q/agentwire.json", "b".repeat(64)],
  ]);
  expect(again.verdict("/p/agentwire.json", HASH)).toBe("trusted");
  expect(again.verdict("/p/agentwire.json", "c".repeat(64))).toBe("changed");
  expect(again.verdict("/r/agentwire.json", HASH)).toBe("untrusted");
  expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ version: 1, files: { "/p/agentwire.json": { sha256: HASH } } });
});

it("refuses a list it did not write, naming the file", async () => {
  const bad: unknown[] = [
    "not json",
    [],
    null,
    { version: 1 },
    { files: {} },
    { version: 2, files: {} },
    { version: 1, files: [] },
    { version: 1, files: {}, extra: true },
    { version: 1, files: { "/p": { sha256: HASH } } },
    { version: 1, files: { "/p": { ...entry, extra: 1 } } },
    { version: 1, files: { "/p": { ...entry, sha256: "A".repeat(64) } } },
    { version: 1, files: { "/p": { ...entry, sha256: "a".repeat(63) } } },
    { version: 1, files: { "/p": { ...entry, trustedAt: 5 } } },
    { version: 1, files: { "/p": "yes" } },
  ];
  for (const value of bad) {
    await writeFile(path, typeof value === "string" ? value : JSON.stringify(value), { mode: 0o600 });
    let caught: unknown;
    try {
      TrustStore.load(path);
    } catch (error) {
      caught = error;
    }
    expect(caught, JSON.stringify(value)).toBeInstanceOf(ConfigFileError);
    expect((caught as Error).message).toContain(path);
    expect((caught as Error).message).toContain("is not a trust list agentwire wrote");
  }
  // The same shape with a valid entry is taken.
  await writeFile(path, JSON.stringify({ version: 1, files: { "/p": entry } }), { mode: 0o600 });
  expect(TrustStore.load(path).verdict("/p", HASH)).toBe("trusted");
});
