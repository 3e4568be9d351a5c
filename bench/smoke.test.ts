/**
 * The benchmark runs and prints every row: `bench/run.ts --smoke` from
 * source (tiny sizes, ~30-40 s; the storage sizes are stand-ins of 2000
 * records or fewer). Run by `npm run bench:smoke`, which CI runs as its own
 * step: it is a load run, kept out of `npm test` to keep that short. No timed assertions: a missed target is not a failure
 * here, a scenario that errors is — including the attack scenario when the
 * attacker's frames are not all answered with the expected refusals.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { ROW_SPECS } from "./rows.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

function runSmoke(args: string[] = [], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bench/run.ts", "--smoke", ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 170_000,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

it("bench --smoke runs every scenario and prints every row of the table", async () => {
  const { code, stdout, stderr } = await runSmoke();
  const table = stdout.slice(stdout.indexOf("agentwire benchmark, smoke run"));
  expect(table, `no final table; stderr:\n${stderr.slice(-3000)}`).not.toBe("");
  const lines = table.split("\n");
  for (const spec of ROW_SPECS) {
    const line = lines.find((l) => l.includes(`| ${spec.label} `));
    expect(line, `row "${spec.scenario}: ${spec.label}" missing`).toBeDefined();
    expect(line, `row "${spec.label}" has no figure; stderr:\n${stderr.slice(-3000)}`).not.toContain("error:");
  }
  expect(code, stderr.slice(-3000)).toBe(0);
}, 180_000);

it("cluster-fanout without Redis (or PostgreSQL) is not measured, says why, and fails nothing", async () => {
  const { code, stdout, stderr } = await runSmoke(["--only", "cluster-fanout"], { AGENTWIRE_BENCH_REDIS: "redis://127.0.0.1:1" });
  expect(stderr).toContain("cluster fan-out not measured: nothing answers at Redis (127.0.0.1:1; AGENTWIRE_BENCH_REDIS)");
  const row = stdout.split("\n").find((l) => l.includes("| per-token latency p99, subscribers on A"));
  expect(row).toMatch(/\| — ms /);
  expect(row).not.toContain("error:");
  expect(code, stderr.slice(-3000)).toBe(0);
}, 60_000);
