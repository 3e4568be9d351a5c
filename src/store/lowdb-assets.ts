import { mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ASSET_ID_PATTERN, isImageMimeType } from "../../protocol/index.js";
import type { AssetReservation } from "./asset-quota.js";
import type { AssetInfo } from "./conversation-store.js";
import { asStoreFileError, errorCode } from "./store-file-error.js";
import { removeFile } from "./remove-file.js";

/**
 * The assets of one conversation of the lowdb store, as plain files beside
 * its records:
 *
 *     conversations/<id>/assets/<assetId>        the bytes
 *     conversations/<id>/assets/<assetId>.json   {assetId, mimeType, size, name?, createdAt}
 *
 * Inside the conversation's folder, so deleting the conversation removes them
 * with it. Each file is written to a temp name and renamed; the metadata file
 * goes last and is what makes the asset exist, so a crash between the two
 * leaves only an unreferenced bytes file (removed with the conversation).
 * Bytes are not JSON and not cached: they are read when a model request
 * needs them.
 *
 * Every put first reserves its bytes with the store's quota (`reserve`),
 * which refuses it with AssetQuotaError before anything is written; a
 * failed write gives them back.
 */
export class LowdbAssets {
  readonly #dir: string;
  readonly #reserve: (bytes: number, replacedBytes: number) => Promise<AssetReservation>;
  readonly #writes = new Set<Promise<unknown>>();

  constructor(conversationDir: string, reserve: (bytes: number, replacedBytes: number) => Promise<AssetReservation>) {
    this.#dir = join(conversationDir, "assets");
    this.#reserve = reserve;
  }

  put(info: AssetInfo, bytes: Uint8Array): Promise<void> {
    const work = this.#put(info, bytes);
    this.#writes.add(work);
    const forget = () => this.#writes.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Resolves once the writes begun so far have settled (before the folder is removed or the handle retired). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.#writes]);
  }

  async info(assetId: string): Promise<AssetInfo | undefined> {
    if (!ASSET_ID_PATTERN.test(assetId)) return undefined;
    const path = join(this.#dir, `${assetId}.json`);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if (errorCode(error) === "ENOENT") return undefined;
      throw asStoreFileError(error, path, "could not be read");
    }
    try {
      return parseInfo(JSON.parse(text), assetId);
    } catch {
      throw asStoreFileError(new Error("not asset metadata"), path, "is damaged");
    }
  }

  async read(assetId: string): Promise<{ info: AssetInfo; bytes: Buffer } | undefined> {
    const info = await this.info(assetId);
    if (!info) return undefined;
    const path = join(this.#dir, assetId);
    const bytes = await readFile(path).catch((error: unknown) => {
      throw asStoreFileError(error, path, "could not be read");
    });
    return { info, bytes };
  }

  async #put(info: AssetInfo, bytes: Uint8Array): Promise<void> {
    if (!ASSET_ID_PATTERN.test(info.assetId)) throw new Error(`invalid asset id ${JSON.stringify(info.assetId)}`);
    // An asset of the same id is replaced: only the difference counts.
    const replaced = (await this.info(info.assetId).catch(() => undefined))?.size ?? 0;
    const reservation = await this.#reserve(bytes.length, replaced);
    const data = join(this.#dir, info.assetId);
    const meta = join(this.#dir, `${info.assetId}.json`);
    const temps = [join(this.#dir, `.${info.assetId}.tmp`), join(this.#dir, `.${info.assetId}.json.tmp`)];
    try {
      // Not recursive: if the conversation's folder is gone, so is the conversation.
      await mkdir(this.#dir).catch((error: unknown) => {
        if (errorCode(error) !== "EEXIST") throw error;
      });
      await writeFile(temps[0], bytes);
      await rename(temps[0], data);
      await writeFile(temps[1], JSON.stringify(info));
      await rename(temps[1], meta);
    } catch (error) {
      await Promise.all([...temps, data].map((path) => removeFile(path).catch(() => undefined)));
      reservation.release();
      throw asStoreFileError(error, data, "could not be written");
    }
    reservation.commit();
  }
}

/**
 * Bytes of the assets stored in a conversation's folder, as the disk holds
 * them (every file but the small metadata; a bytes file left by a crash
 * counts too, as it takes the space): the start-up count of the quota.
 */
export async function assetBytesOnDisk(conversationDir: string): Promise<number> {
  const dir = join(conversationDir, "assets");
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return 0;
    throw asStoreFileError(error, dir, "cannot be listed");
  }
  let bytes = 0;
  for (const name of names) {
    if (name.endsWith(".json")) continue;
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info?.isFile()) bytes += info.size;
  }
  return bytes;
}

function parseInfo(value: unknown, assetId: string): AssetInfo {
  const v = value as Partial<AssetInfo> | null;
  if (
    !v ||
    v.assetId !== assetId ||
    !isImageMimeType(v.mimeType) ||
    !Number.isInteger(v.size) ||
    typeof v.createdAt !== "string" ||
    (v.name !== undefined && typeof v.name !== "string")
  ) {
    throw new Error("bad asset metadata");
  }
  return v as AssetInfo;
}
