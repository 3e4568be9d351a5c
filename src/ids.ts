import { randomFillSync } from "node:crypto";

/** Random bytes for 128 ids, filled at once: one randomFillSync call per 128 ids instead of one randomBytes call per id (a few per streamed turn). */
const ID_BYTES = 12;
const pool = Buffer.alloc(ID_BYTES * 128);
let offset = pool.length;

/**
 * Random ids with a readable prefix ("c_" conversation, "r_" record,
 * "g_" generation, "k_" connection, "a_" asset, "q_" question). 96 random bits, base64url: safe in
 * file names and URLs. The bits come from the CSPRNG (crypto), taken from a pool each byte of which is used once.
 */
export function newId(prefix: "c" | "r" | "g" | "k" | "a" | "q"): string {
  if (offset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString("base64url", offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `${prefix}_${id}`;
}
