/**
 * The client as a browser app would ship it: clients/typescript/index.ts
 * bundled by esbuild for the browser, ESM, minified. It must pull in nothing
 * but its own folder (no zod, no protocol/, no ws) and stay small.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Budget with room to grow: measured 6.3 kB minified, 2.6 kB gzipped (runtime,
 * error table, 14 request methods). Types cost nothing at run time; a jump
 * past this means something heavy was pulled in.
 */
const BUDGET = { minified: 10_000, gzipped: 4_000 };

it("bundles for the browser without zod, protocol/ or ws, within its size budget", async () => {
  const result = await build({
    entryPoints: [join(root, "clients/typescript/index.ts")],
    bundle: true,
    platform: "browser",
    format: "esm",
    minify: true,
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  expect(result.errors).toEqual([]);
  const code = result.outputFiles[0].text;
  const inputs = Object.keys(result.metafile.inputs).map((path) => resolve(root, path));
  expect(inputs.every((path) => path.startsWith(join(root, "clients/typescript/"))), inputs.join("\n")).toBe(true);
  const external = Object.values(result.metafile.inputs).flatMap((input) => input.imports.filter((i) => i.external));
  expect(external).toEqual([]);
  expect(code).not.toMatch(/zod/i);
  expect(code).not.toMatch(/\bfrom\s*["']ws["']|require\(["']ws["']\)|import\(["']ws["']\)/);
  expect(code).not.toMatch(/\bimport\b[^;]*["'][^"']+["']/); // one self-contained module: no import left at all

  const size = { minified: Buffer.byteLength(code), gzipped: gzipSync(code).length };
  console.log(`client bundle: ${size.minified} bytes minified, ${size.gzipped} bytes gzipped`);
  expect(size.minified).toBeLessThan(BUDGET.minified);
  expect(size.gzipped).toBeLessThan(BUDGET.gzipped);

  // And the bundle is the client: its exports load and work on their own.
  const dir = mkdtempSync(join(tmpdir(), "agentwire-client-bundle-"));
  try {
    writeFileSync(join(dir, "client.mjs"), code);
    const bundled = await import(pathToFileURL(join(dir, "client.mjs")).href);
    expect(typeof bundled.AgentwireClient.connect).toBe("function");
    expect(bundled.PROTOCOL_VERSION).toMatch(/^\d+\.\d+$/);
    const error = new bundled.AgentwireRpcError(bundled.ErrorCodes.INVALID_PARAMS, "Invalid params", { issues: [] });
    expect(bundled.isRpcError(error, "INVALID_PARAMS")).toBe(true);
    expect(bundled.isRpcError(error, "INTERNAL_ERROR")).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
