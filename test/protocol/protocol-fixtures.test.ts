/**
 * Example payloads as data: test/fixtures/protocol/<TypeName>/<case>.json.
 *
 * Every valid fixture must parse with its schema, and parse to itself: zod
 * objects strip unknown keys, so a misspelt field would otherwise pass
 * unnoticed and the example would document a field that does not exist.
 * Every `invalid/<case>.json` holds `{ "payload": …, "path": "a.b" }` and must
 * be rejected with an issue at that path ("" for the payload itself).
 *
 * The type names come from the method inventory plus the stored records, so
 * adding a method without examples, or misspelling a directory, fails here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { notifications, notificationTypeName, requests, requestTypeNames } from "../../protocol/inventory.js";
import { Conversation, MessageRecord, ToolCallRecord } from "../../protocol/records.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/protocol", import.meta.url));
const INVALID = "invalid";

/** Type name → schema, walked from the inventory; the records are stored, not sent as a method payload. */
function knownTypes(): Map<string, z.ZodType> {
  const types = new Map<string, z.ZodType>();
  const add = (name: string, schema: z.ZodType) => {
    const existing = types.get(name);
    if (existing && existing !== schema) throw new Error(`type name ${name} is used for two different schemas`);
    types.set(name, schema);
  };
  for (const [method, entry] of Object.entries(requests)) {
    add(requestTypeNames(method).params, entry.params);
    add(requestTypeNames(method).result, entry.result);
  }
  for (const [method, entry] of Object.entries(notifications)) add(notificationTypeName(method), entry.params);
  add("Conversation", Conversation);
  add("MessageRecord", MessageRecord);
  add("ToolCallRecord", ToolCallRecord);
  return types;
}

interface Fixture {
  type: string;
  name: string;
  file: string;
  value: unknown;
}

const jsonFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")).sort() : []);
const read = (type: string, file: string, dir: string): Fixture => ({
  type,
  name: file.slice(0, -".json".length),
  file: join(dir, file),
  value: JSON.parse(readFileSync(join(dir, file), "utf8")),
});

const types = knownTypes();
const directories = readdirSync(FIXTURES).filter((d) => statSync(join(FIXTURES, d)).isDirectory()).sort();
const valid = directories.flatMap((type) => jsonFiles(join(FIXTURES, type)).map((f) => read(type, f, join(FIXTURES, type))));
const invalid = directories.flatMap((type) => {
  const dir = join(FIXTURES, type, INVALID);
  return jsonFiles(dir).map((f) => read(type, f, dir));
});

const issuePath = (issue: z.core.$ZodIssue) => issue.path.map(String).join(".");
const describeIssues = (error: z.ZodError) =>
  `${z.prettifyError(error)}\n${JSON.stringify(error.issues, null, 2)}`;

function schemaFor(fixture: Fixture): z.ZodType {
  const schema = types.get(fixture.type);
  if (!schema) throw new Error(`${fixture.file}: no protocol type is named "${fixture.type}"`);
  return schema;
}

describe("protocol fixtures: coverage", () => {
  it("every inventory type and record has at least one valid fixture", () => {
    const withExamples = new Set(valid.map((f) => f.type));
    const missing = [...types.keys()].filter((name) => !withExamples.has(name)).sort();
    expect(missing, `add test/fixtures/protocol/<TypeName>/<case>.json for: ${missing.join(", ")}`).toEqual([]);
  });

  it("every fixture directory names a known type", () => {
    const unknown = directories.filter((d) => !types.has(d));
    expect(unknown, `no protocol type has these names (typo, or a removed type?): ${unknown.join(", ")}`).toEqual([]);
  });

  it("fixture directories hold only .json files and an invalid/ folder of .json files", () => {
    const strays: string[] = [];
    for (const type of directories) {
      for (const entry of readdirSync(join(FIXTURES, type))) {
        const path = join(type, entry);
        if (entry === INVALID && statSync(join(FIXTURES, path)).isDirectory()) {
          for (const inner of readdirSync(join(FIXTURES, path))) if (!inner.endsWith(".json")) strays.push(join(path, inner));
        } else if (!entry.endsWith(".json") || statSync(join(FIXTURES, path)).isDirectory()) {
          strays.push(path);
        }
      }
    }
    for (const entry of readdirSync(FIXTURES)) if (!directories.includes(entry)) strays.push(entry);
    expect(strays, "files the fixture test would silently ignore").toEqual([]);
  });
});

describe("protocol fixtures: valid payloads parse", () => {
  it.each(valid.map((f) => [`${f.type}/${f.name}`, f] as const))("%s", (_label, fixture) => {
    const parsed = schemaFor(fixture).safeParse(fixture.value);
    if (!parsed.success) expect.fail(`${fixture.file} does not parse:\n${describeIssues(parsed.error)}`);
    // Parsing must not drop anything: a key the schema does not know would be stripped silently.
    expect(parsed.data, `${fixture.file} has fields the schema does not know`).toEqual(fixture.value);
  });
});

describe("protocol fixtures: invalid payloads are rejected at the named path", () => {
  it.each(invalid.map((f) => [`${f.type}/invalid/${f.name}`, f] as const))("%s", (_label, fixture) => {
    const shape = z.object({ payload: z.unknown().refine((v) => v !== undefined, "payload is required"), path: z.string() }).strict().safeParse(fixture.value);
    if (!shape.success) expect.fail(`${fixture.file} must be { "payload": …, "path": "a.b" }:\n${describeIssues(shape.error)}`);
    const { payload, path } = shape.data;
    const parsed = schemaFor(fixture).safeParse(payload);
    if (parsed.success) expect.fail(`${fixture.file} was accepted, expected an issue at "${path}"`);
    const paths = parsed.error.issues.map(issuePath);
    expect(paths, `${fixture.file}: no issue at "${path}"\n${describeIssues(parsed.error)}`).toContain(path);
  });
});
