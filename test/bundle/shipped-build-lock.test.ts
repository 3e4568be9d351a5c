/**
 * The lock on what ships (test/harness/shipped-bundle.ts): held by a build, or by a benchmark for its
 * whole run (bench/run.ts), so a test run's global setup never rebuilds dist/bundle under the servers a
 * benchmark started. Tried on a checkout of its own (a temp dir), never this one's dist/.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireShippedBuild } from "../harness/shipped-bundle.js";
import { REPO_ROOT } from "../harness/repo-root.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "agentwire-lock-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const lock = () => join(root, "dist", ".shipped-build.lock");

describe("the lock on what ships", () => {
  it("waits while another live process holds it, and is taken once that one lets go", async () => {
    const holder = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `const { acquireShippedBuild } = await import(${JSON.stringify(join(REPO_ROOT, "test/harness/shipped-bundle.ts"))});
         const release = await acquireShippedBuild(${JSON.stringify(root)});
         console.log("held");
         setTimeout(() => { console.log("releasing at " + Date.now()); release(); }, 800);`,
      ],
      { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    const closed = new Promise((resolve) => holder.on("close", resolve));
    let out = "";
    holder.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    await expect.poll(() => out, { timeout: 20_000 }).toContain("held");
    const asked = Date.now();
    const release = await acquireShippedBuild(root);
    const acquiredAt = Date.now();
    const waited = acquiredAt - asked;
    // The holder's line may reach this process after the lock's removal does: waited for, then compared by time.
    await expect.poll(() => out, { timeout: 5_000 }).toMatch(/releasing at \d+/);
    expect(Number(/releasing at (\d+)/.exec(out)![1])).toBeLessThanOrEqual(acquiredAt);
    expect(waited).toBeGreaterThan(200);
    expect(existsSync(lock())).toBe(true);
    release();
    expect(existsSync(lock())).toBe(false);
    await closed;
  }, 30_000);

  it("takes over a lock whose holder is gone (killed mid-run) at once", async () => {
    const gone = spawn(process.execPath, ["-e", "0"]);
    await new Promise((resolve) => gone.on("close", resolve));
    mkdirSync(lock(), { recursive: true });
    writeFileSync(join(lock(), "pid"), String(gone.pid));
    const asked = Date.now();
    const release = await acquireShippedBuild(root);
    expect(Date.now() - asked).toBeLessThan(1000);
    release();
  });
});
