/**
 * Every request's params as data (protocol/params-data.ts, generated from the
 * inventory) parsed without zod (protocol/schema-data.ts) must never disagree
 * with the method's zod params schema: over the protocol's example payloads
 * (test/fixtures/protocol/<Method>Params, valid and invalid) and seeded
 * mutations of them. The named rules (protocol/schema-rules.ts) are data too:
 * message.append and tool.confirm, which check which fields go together, are
 * decided without zod.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { requests, requestTypeNames, type RequestEntry } from "../../protocol/inventory.js";
import { PARAMS_DATA } from "../../protocol/params-data.js";
import { fastParse, INVALID, UNKNOWN } from "../../protocol/schema-data.js";
import { agree, mutator, newTally } from "../harness/schema-agreement.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/protocol", import.meta.url));

/** The example params of a method: its fixtures' valid and invalid cases, and {}. */
function examples(method: string): unknown[] {
  const dir = join(FIXTURES, requestTypeNames(method).params);
  const read = (folder: string) =>
    existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith(".json")).map((f) => JSON.parse(readFileSync(join(folder, f), "utf8")) as unknown) : [];
  return [{}, ...read(dir), ...read(join(dir, "invalid"))];
}

const methods = Object.entries(requests as Record<string, RequestEntry>);

describe("params as data agree with the methods' zod schemas", () => {
  it("has a node for every request, and decides most of them entirely without zod", () => {
    expect(Object.keys(PARAMS_DATA).sort()).toEqual(methods.map(([m]) => m).sort());
    // The one-shot chat's requests and the approvals' answer: decided without zod when valid.
    const valid: [string, unknown][] = [
      ["initialize", { protocolVersion: "1.0", clientInfo: { name: "t", version: "1" } }],
      ["message.append", { conversationId: "c_1", role: "user", content: "hi" }],
      ["tool.confirm", { conversationId: "c_1", toolCallId: "t_1", action: "edit", arguments: { a: 1 } }],
      ["step", { conversationId: "c_1" }],
    ];
    for (const [method, params] of valid) {
      const node = PARAMS_DATA[method as keyof typeof PARAMS_DATA];
      const zod = (requests as Record<string, RequestEntry>)[method]!.params.safeParse(params);
      expect(zod.success, `${method}: ${zod.error?.message}`).toBe(true);
      expect(fastParse(node, params), method).toEqual({ value: zod.data });
    }
    // Every request's params are data, discriminated unions (attachments, imported records) included: none is left to zod.
    const opaque = (node: unknown): boolean =>
      typeof node === "object" && node !== null && ((node as { type?: string }).type === "opaque" || Object.values(node).some(opaque));
    expect(Object.entries(PARAMS_DATA).filter(([, node]) => opaque(node)).map(([m]) => m)).toEqual([]);
    const appendSchema = (requests as Record<string, RequestEntry>)["message.append"]!.params;
    const withAttachments = examples("message.append").find((e) => Array.isArray((e as { attachments?: unknown }).attachments));
    expect(fastParse(PARAMS_DATA["message.append"], withAttachments)).toEqual({ value: appendSchema.parse(withAttachments) });
    // A line range backwards (a named rule inside the attachment's union option): refused as data, and by zod.
    const backwards = structuredClone(withAttachments) as { attachments: Record<string, unknown>[] };
    const file = backwards.attachments.find((a) => "path" in a)!;
    file.lines = { start: 5, end: 2 };
    expect(fastParse(PARAMS_DATA["message.append"], backwards)).toBe(INVALID);
    expect(appendSchema.safeParse(backwards).success).toBe(false);
    // A rule's refusal is decided without zod too: content and command together.
    expect(fastParse(PARAMS_DATA["message.append"], { conversationId: "c_1", role: "user", content: "a", command: "b" })).toBe(INVALID);
    expect(fastParse(PARAMS_DATA["tool.confirm"], { conversationId: "c_1", toolCallId: "t_1", action: "confirm", count: 2 })).toBe(INVALID);
  });

  it("on every method's example payloads and 40 seeded mutations of each", () => {
    const tally = newTally();
    const { mutate, pick } = mutator(27);
    for (const [method, entry] of methods) {
      const node = PARAMS_DATA[method as keyof typeof PARAMS_DATA];
      const cases = examples(method);
      for (const value of cases) agree(node, entry.params, value, `${method} example`, tally);
      for (let i = 0; i < 40; i++) agree(node, entry.params, mutate(pick(cases)), `${method} mutation`, tally);
    }
    expect(tally.accepted).toBeGreaterThan(200);
    expect(tally.refused).toBeGreaterThan(1000);
    expect(tally.unknown).toBeLessThan(tally.accepted);
    expect(UNKNOWN).not.toBe(INVALID);
  });
});
