/**
 * A client command's own server does not read every stored conversation
 * before it answers: the lowdb store's start-up check (each meta.json) and
 * count of stored images wait COMMAND_STORE_SCAN_DELAY_MS
 * (LowdbStoreOptions.startupScanDelayMs), so a one-shot `agentwire chat` is
 * done before them. A longer session still gets the check, and an upload
 * does not wait for the delay: its quota check counts the stored images
 * first.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AssetQuotaError } from "../../src/store/asset-quota.js";
import type { AssetInfo, DamagedConversation } from "../../src/store/conversation-store.js";
import { LowdbConversationStore } from "../../src/store/lowdb-store.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { shippedBundle } from "../harness/shipped-bundle.js";
import { conversation } from "../harness/store-records.js";

let fake: FakeOpenAI;
let root: string;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: "test-key" });
  root = await mkdtemp(join(tmpdir(), "agentwire-embedded-scan-"));
});
afterAll(async () => {
  await killAllCli();
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

const DAMAGED = "c_damaged0000001";

/** A data dir whose index lists one conversation whose meta.json is not JSON: the start-up check reports it. */
async function dataDirWithDamage(name: string): Promise<string> {
  const dataDir = join(root, name);
  await mkdir(join(dataDir, "conversations", DAMAGED), { recursive: true });
  await writeFile(join(dataDir, "index.json"), JSON.stringify({ conversations: [{ id: DAMAGED, createdAt: "2026-01-01T00:00:00.000Z" }] }));
  await writeFile(join(dataDir, "conversations", DAMAGED, "meta.json"), "{ not json");
  return dataDir;
}

const png = (n: number, size: number): AssetInfo => ({ assetId: `a_${n}`, mimeType: "image/png", size, name: `p${n}.png`, createdAt: "2026-01-01T00:00:00.000Z" });

describe("the embedded server's store scan", { timeout: 60_000 }, () => {
  it("a one-shot chat answers and exits without the start-up check of the stored conversations (nothing found damaged at warn level)", async () => {
    const dataDir = await dataDirWithDamage("oneshot");
    fake.enqueue({ kind: "reply", text: ["hi"] });
    const chat = runCli(["chat", "hello", "--json", "--data-dir", dataDir, "--log-level", "warn"], {
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "test-key",
      AGENTWIRE_MODEL: "fake-model",
    }, shippedBundle(), root);
    expect((await chat.exited).code).toBe(0);
    expect(chat.stdout()).toContain('"type":"end","outcome":"completed"');
    // Checked at once (as `serve` does), the damaged conversation was logged before the answer came.
    expect(chat.stderr()).not.toContain(`conversation ${DAMAGED} is damaged`);
  });

  it("startupScanDelayMs: the check runs once the delay is over; a close before it ends the store without it", async () => {
    const damaged: DamagedConversation[] = [];
    const store = new LowdbConversationStore(await dataDirWithDamage("delayed"), { startupScanDelayMs: 300, onDamaged: (d) => damaged.push(d) });
    const opened = Date.now();
    await store.open();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(damaged).toEqual([]);
    await store.whenChecked();
    expect(Date.now() - opened).toBeGreaterThanOrEqual(290);
    expect(damaged.map((d) => d.id)).toEqual([DAMAGED]);
    await store.close();

    const closedEarly: DamagedConversation[] = [];
    const early = new LowdbConversationStore(await dataDirWithDamage("closed-early"), { startupScanDelayMs: 60_000, onDamaged: (d) => closedEarly.push(d) });
    await early.open();
    const closing = Date.now();
    await early.close();
    expect(Date.now() - closing).toBeLessThan(5_000);
    expect(closedEarly).toEqual([]);
  });

  it("startupScanDelayMs: an upload before the delay is over counts the images already stored", async () => {
    const dataDir = join(root, "quota");
    const limits = { assetLimits: { maxConversationAssetBytes: 100, maxTotalAssetBytes: 10 } };
    const first = new LowdbConversationStore(dataDir, limits);
    await first.open();
    await (await first.create(conversation("one"))).putAsset(png(1, 8), new Uint8Array(8).fill(7));
    await first.close();

    const store = new LowdbConversationStore(dataDir, { ...limits, startupScanDelayMs: 60_000 });
    await store.open();
    const two = await store.create(conversation("two"));
    const refused = await two.putAsset(png(1, 3), new Uint8Array(3).fill(7)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AssetQuotaError);
    expect(refused).toMatchObject({ limit: "maxTotalAssetBytes", max: 10, actual: 11 });
    await two.putAsset(png(2, 2), new Uint8Array(2).fill(7));
    expect(await two.assetInfo("a_2")).toMatchObject({ size: 2 });
    await store.close();
  });
});
