/**
 * `<dataDir>/SERVER`: where the process holding LOCK listens, for the client
 * commands to connect to it. Only an advert by the live LOCK holder counts;
 * the token is never in it; it goes away with the LOCK.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { DataDirLock, dataDirHolder } from "../../src/store/data-dir-lock.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-advert-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it("free, then starting (LOCK held, nothing said), then serving; withdrawn and gone with the LOCK", async () => {
  expect(await dataDirHolder(dir)).toEqual({ kind: "free" });
  const lock = await DataDirLock.acquire(dir);
  expect(await dataDirHolder(dir)).toEqual({ kind: "starting", pid: process.pid });

  await lock.advertise({ shared: true, url: "ws://127.0.0.1:4567", tokenRequired: true });
  expect(await dataDirHolder(dir)).toEqual({ kind: "serving", pid: process.pid, url: "ws://127.0.0.1:4567", tokenRequired: true });
  expect(JSON.parse(await readFile(join(dir, "SERVER"), "utf8"))).toEqual({ pid: process.pid, shared: true, url: "ws://127.0.0.1:4567", tokenRequired: true });
  // Written by rename: no temp file stays behind.
  expect((await readdir(dir)).sort()).toEqual(["LOCK", "SERVER"]);

  await lock.advertise(null);
  expect(await dataDirHolder(dir)).toEqual({ kind: "starting", pid: process.pid });

  await lock.advertise({ shared: false });
  expect(await dataDirHolder(dir)).toEqual({ kind: "private", pid: process.pid });

  await lock.release();
  expect(await readdir(dir)).toEqual([]);
  expect(await dataDirHolder(dir)).toEqual({ kind: "free" });
});

it("an advert that is not the live holder's (left by a killed server, or unreadable) says nothing", async () => {
  const lock = await DataDirLock.acquire(dir);
  try {
    await writeFile(join(dir, "SERVER"), JSON.stringify({ pid: 999_999_999, shared: true, url: "ws://127.0.0.1:1", tokenRequired: false }));
    expect(await dataDirHolder(dir)).toEqual({ kind: "starting", pid: process.pid });
    await writeFile(join(dir, "SERVER"), "{half an adv");
    expect(await dataDirHolder(dir)).toEqual({ kind: "starting", pid: process.pid });
    await writeFile(join(dir, "SERVER"), JSON.stringify({ pid: process.pid, shared: true, url: "file:///etc/passwd", tokenRequired: false }));
    expect(await dataDirHolder(dir)).toEqual({ kind: "starting", pid: process.pid });
  } finally {
    await lock.release();
  }
  // Not ours: release leaves someone else's advert alone (the next holder overwrites it).
  await writeFile(join(dir, "SERVER"), JSON.stringify({ pid: 999_999_999, shared: false }));
  expect(await dataDirHolder(dir)).toEqual({ kind: "free" });
});
