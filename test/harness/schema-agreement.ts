/**
 * Holds the parse without zod (protocol/schema-data.ts) to zod's parse of the
 * schema it was generated from: what it accepts, zod accepts with the same
 * output (same keys in the same order, defaults included); what it refuses,
 * zod refuses. UNKNOWN claims nothing. Counts each answer, so a test can show
 * it was not vacuous.
 */
import { isDeepStrictEqual } from "node:util";
import { expect } from "vitest";
import type * as z from "zod";
import { fastParse, INVALID, type SchemaNode, UNKNOWN } from "../../protocol/schema-data.js";

export interface Tally {
  accepted: number;
  refused: number;
  unknown: number;
}

export const newTally = (): Tally => ({ accepted: 0, refused: 0, unknown: 0 });

/** Same value, same key order at every level, undefined-valued keys included. */
export function sameOutput(a: unknown, b: unknown): boolean {
  if (!isDeepStrictEqual(a, b)) return false;
  if (typeof a !== "object" || a === null) return true;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b as object);
  return keysA.join("\0") === keysB.join("\0") && keysA.every((k) => sameOutput((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export function agree(node: SchemaNode, schema: z.ZodType, value: unknown, label: string, tally: Tally): void {
  const fast = fastParse(node, value);
  const zod = schema.safeParse(value, { jitless: true });
  if (fast === UNKNOWN) {
    tally.unknown++;
    return;
  }
  if (fast === INVALID) {
    tally.refused++;
    expect(zod.success, `${label}: refused without zod, accepted by zod: ${JSON.stringify(value)}`).toBe(false);
    return;
  }
  tally.accepted++;
  expect(zod.success, `${label}: accepted without zod, refused by zod (${zod.error?.issues[0]?.message}): ${JSON.stringify(value)}`).toBe(true);
  expect(sameOutput(fast.value, zod.data), `${label}: outputs differ for ${JSON.stringify(value)}`).toBe(true);
}

/** A seeded source of random mutations of JSON values: a leaf replaced, a key added, a level deep. */
export function mutator(seed: number) {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const leaves: unknown[] = [null, 0, 1, -5, 1.5, 70000, true, false, "", "x", "http://h/v1", "a*", "A=B", "auto", "ask", "edit", "c_1", [], ["x"], {}, { x: 1 }];
  const names = ["extra", "name", "baseUrl", "command", "url", "wire", "content", "arguments", "action", "count", "message", "remember"];
  const mutate = (value: unknown, depth: number): unknown => {
    if (depth > 0 && typeof value === "object" && value !== null) {
      const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...value };
      const keys = Object.keys(copy);
      if (keys.length > 0 && random() < 0.7) {
        const key = pick(keys);
        (copy as Record<string, unknown>)[key] = mutate((copy as Record<string, unknown>)[key], depth - 1);
      } else if (keys.length > 0 && random() < 0.3 && !Array.isArray(copy)) {
        delete copy[pick(keys)];
      } else if (!Array.isArray(copy)) {
        copy[pick(names)] = pick(leaves);
      }
      return copy;
    }
    return random() < 0.5 ? pick(leaves) : value;
  };
  return { random, pick, mutate: (value: unknown) => mutate(structuredClone(value), 1 + Math.floor(random() * 5)) };
}
