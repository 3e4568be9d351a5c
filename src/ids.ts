import { randomBytes } from "node:crypto";

/**
 * Random ids with a readable prefix ("c_" conversation, "r_" record,
 * "g_" generation, "k_" connection, "a_" asset, "q_" question). 96 random bits, base64url: safe in
 * file names and URLs.
 */
export function newId(prefix: "c" | "r" | "g" | "k" | "a" | "q"): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}
