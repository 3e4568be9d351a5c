/**
 * docs/reference/protocol.md: every request (params, result, the errors it
 * can answer with, an example exchange), every notification, the stored
 * record types, and the error-code table. Everything comes from protocol/
 * (the inventory, the error table, the schemas' `.describe()` text through
 * their JSON Schema) and the examples from test/fixtures/protocol/, which
 * protocol-fixtures.test.ts parses with the same schemas, so an example
 * cannot show a field that does not exist.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ErrorCodes, ErrorData, ErrorTable, type ErrorCodeName } from "../../protocol/errors.js";
import {
  notifications,
  notificationTypeName,
  requests,
  requestTypeNames,
  type NotificationEntry,
  type RequestEntry,
} from "../../protocol/inventory.js";
import { PROTOCOL_VERSION } from "../../protocol/version.js";
import { records, toJsonSchema, type JsonSchema } from "./json-schema.js";
import { cell, code, jsonBlock, pageTop, prose, Slugger, table } from "./markdown.js";
import { methodErrors } from "./openrpc.js";
import { descriptionCell, fieldRows, namedKey, type NamedTypes, typeText } from "./schema-fields.js";

export const PROTOCOL_REFERENCE_PATH = "docs/reference/protocol.md";
/** Where the examples live, from the repository root; the page links them from docs/reference/. */
export const FIXTURES_DIR = "test/fixtures/protocol";
const FROM_PAGE = "../..";

/** The example files of one protocol type: default.json first when there is one, then by name. */
export function fixtureFiles(root: string, typeName: string): string[] {
  const dir = join(root, FIXTURES_DIR, typeName);
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort();
  return [...files.filter((f) => f === "default.json"), ...files.filter((f) => f !== "default.json")];
}

interface Example {
  value: unknown;
  /** The other examples of the type, as links from the page. */
  more: string[];
}

function example(root: string, typeName: string): Example | undefined {
  const [first, ...rest] = fixtureFiles(root, typeName);
  if (first === undefined) return undefined;
  const value: unknown = JSON.parse(readFileSync(join(root, FIXTURES_DIR, typeName, first), "utf8"));
  const link = (file: string) => `[${file.slice(0, -".json".length)}](${FROM_PAGE}/${FIXTURES_DIR}/${typeName}/${file})`;
  return { value, more: rest.map(link) };
}

/** Headings of the page in document order, each with its anchor (anchors depend on order only when two headings collide). */
class Headings {
  private readonly slugger = new Slugger();
  readonly anchors = new Map<string, string>();

  add(key: string, text: string): string {
    const anchor = this.slugger.slug(text);
    this.anchors.set(key, anchor);
    return anchor;
  }

  get(key: string): string {
    const anchor = this.anchors.get(key);
    if (anchor === undefined) throw new Error(`codegen: no heading for ${key}`);
    return anchor;
  }
}

const requestEntries = () => Object.entries(requests as Record<string, RequestEntry>);
const notificationEntries = () => Object.entries(notifications as Record<string, NotificationEntry>);
const errorNames = () => Object.keys(ErrorTable) as ErrorCodeName[];
const hasData = (name: ErrorCodeName) => name in ErrorData;

/** A payload: its description, then its fields as a table, or its type when it is not an object with fields. */
function payload(schema: JsonSchema, named: NamedTypes, heading: { what: string; typeName: string } | undefined): string[] {
  const out: string[] = [];
  const link = named.get(namedKey(schema));
  const described = typeof schema.description === "string" ? prose(schema.description) : "";
  const head = heading ? `**${heading.what}** ${code(heading.typeName)}` : "";
  if (link) return [`${head}: ${typeText(schema, named)}${described ? ` — ${described}` : ""}`];
  out.push(head && described ? `${head} — ${described}` : head || described);
  const rows = fieldRows(schema, named);
  if (rows.length > 0) {
    out.push("", table(["Field", "Type", "Required", "Description"], rows.map((r) => [code(r.path), typeText(r.schema, named), r.required ? "yes" : "", descriptionCell(r)])));
  } else if (schema.type === "object" && schema.properties !== undefined) {
    out.push("", "No fields: `{}`.");
  } else {
    out.push("", `Type: ${typeText(schema, named)}`);
  }
  return out;
}

function exampleBlocks(ex: Example | undefined, typeName: string, frame: (value: unknown) => unknown, label: string): string[] {
  if (!ex) return [`*No example yet: add one under \`${FIXTURES_DIR}/${typeName}/\`.*`];
  const more = ex.more.length > 0 ? ["", `More examples of ${code(typeName)}: ${ex.more.join(", ")}.`] : [];
  return [`${label}:`, "", jsonBlock(frame(ex.value)), ...more];
}

/** What every part of the page needs: where the fixtures are, the anchors, and the types to link. */
interface Page {
  root: string;
  h: Headings;
  named: NamedTypes;
  errorLink: (name: ErrorCodeName) => string;
}

export function renderProtocolReference(root: string): string {
  const h = new Headings();
  h.add("title", "Protocol reference");
  h.add("contents", "Contents");
  h.add("requests", "Requests");
  for (const [method] of requestEntries()) h.add(`request:${method}`, method);
  h.add("notifications", "Notifications");
  for (const [method] of notificationEntries()) h.add(`notification:${method}`, method);
  h.add("types", "Types");
  for (const name of Object.keys(records)) h.add(`type:${name}`, name);
  h.add("errors", "Error codes");
  for (const name of errorNames().filter(hasData)) h.add(`error:${name}`, `${name} data`);

  const named: NamedTypes = new Map();
  for (const [name, schema] of Object.entries(records)) {
    named.set(namedKey(toJsonSchema(schema, "output", name)), { name, anchor: h.get(`type:${name}`) });
  }
  const errorLink = (name: ErrorCodeName) => `[${name}](#${hasData(name) ? h.get(`error:${name}`) : h.get("errors")})`;
  const page: Page = { root, h, named, errorLink };
  const out = [...intro(page), ...requestSections(page), ...notificationSections(page), ...typeSections(page), ...errorSections(page)];
  return `${out.join("\n")}\n`;
}

function intro({ h, errorLink }: Page): string[] {
  const anyRequest = (["PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INTERNAL_ERROR"] as const).map(errorLink).join(", ");
  return [
    ...pageTop(
      "Protocol reference",
      "`protocol/` (the method inventory, the error table and the schemas' descriptions); each example is a fixture of its " +
        `type from \`${FIXTURES_DIR}/\` (\`default.json\` when there is one, else the first by name; a request's and its ` +
        "response's examples are separate cases).",
    ),
    "",
    `agentwire speaks JSON-RPC 2.0 over one WebSocket, protocol version ${code(PROTOCOL_VERSION)}. ` +
      "Send `initialize` first. Params are always an object (by name). The server pushes the notifications of every " +
      "conversation a connection subscribes to, each with a per-conversation `seq`. Besides the errors listed per method, " +
      `any request can be answered with ${anyRequest} (see [Error codes](#${h.get("errors")})). The same facts, machine-readable: ` +
      `[\`protocol/openrpc.json\`](${FROM_PAGE}/protocol/openrpc.json) and [\`protocol/schema.json\`](${FROM_PAGE}/protocol/schema.json).`,
    "",
    "## Contents",
    "",
    `- [Requests](#${h.get("requests")}) (client → server): ${requestEntries().map(([m]) => `[${code(m)}](#${h.get(`request:${m}`)})`).join(", ")}`,
    `- [Notifications](#${h.get("notifications")}) (server → client): ${notificationEntries().map(([m]) => `[${code(m)}](#${h.get(`notification:${m}`)})`).join(", ")}`,
    `- [Types](#${h.get("types")}) (records that results and notifications carry): ${Object.keys(records).map((n) => `[${n}](#${h.get(`type:${n}`)})`).join(", ")}`,
    `- [Error codes](#${h.get("errors")})`,
  ];
}

function requestSections({ root, named, errorLink }: Page): string[] {
  const out = ["", "## Requests"];
  requestEntries().forEach(([method, entry], index) => {
    const names = requestTypeNames(method);
    const params = toJsonSchema(entry.params, "input", `${method} params`);
    const result = toJsonSchema(entry.result, "output", `${method} result`);
    out.push("", `### ${code(method)}`, "", prose(entry.description));
    out.push("", scopeText(entry));
    if (entry.experimental) {
      out.push("", `**Experimental** — ${prose(entry.experimental)} Refused with ${errorLink("EXPERIMENTAL_API_REQUIRED")} unless \`initialize\` sent \`capabilities.experimentalApi: true\`.`);
    }
    out.push("", ...payload(params, named, { what: "Params", typeName: names.params }));
    out.push("", ...payload(result, named, { what: "Result", typeName: names.result }));
    const errors = methodErrors(method, entry);
    out.push("", "**Errors**", "");
    out.push(table(["Code", "Name", "Meaning"], errors.map((name) => [String(ErrorCodes[name]), errorLink(name), cell(ErrorTable[name].meaning)])));
    const id = index + 1;
    out.push("", ...exampleBlocks(example(root, names.params), names.params, (p) => ({ jsonrpc: "2.0", id, method, params: p }), "Request"));
    out.push("", ...exampleBlocks(example(root, names.result), names.result, (r) => ({ jsonrpc: "2.0", id, result: r }), "Response"));
  });
  return out;
}

/** Where the method runs, from its inventory scope (protocol/inventory.ts, MethodScope). */
function scopeText(entry: RequestEntry): string {
  switch (entry.scope) {
    case "conversation":
      return entry.runsOn === "caller"
        ? "Scope: `conversation`: runs on the instance the client is connected to (it changes this connection's subscriptions); the conversation's state and events come from the instance that owns it."
        : "Scope: `conversation`: runs on the instance that owns the conversation (forwarded there when several instances share one store).";
    case "connection":
      return "Scope: `connection`: acts on this connection only.";
    case "server":
      return "Scope: `server`: answered by the instance the client is connected to.";
  }
}

function notificationSections({ root, named }: Page): string[] {
  const out = [
    "",
    "## Notifications",
    "",
    "Sent by the server to every connection subscribed to the conversation (`connected` goes to the connection that sent `initialize`; a server-wide `notice`, without conversationId or seq, to every initialized connection). A notification carries no `id` and gets no answer.",
  ];
  for (const [method, entry] of notificationEntries()) {
    const typeName = notificationTypeName(method);
    const params = toJsonSchema(entry.params, "output", `${method} notification`);
    out.push("", `### ${code(method)}`, "", prose(entry.description));
    out.push("", ...payload(params, named, { what: "Params", typeName }));
    out.push("", ...exampleBlocks(example(root, typeName), typeName, (p) => ({ jsonrpc: "2.0", method, params: p }), "Example"));
  }
  return out;
}

function typeSections({ root, named }: Page): string[] {
  const out = ["", "## Types", "", "Records that several results and notifications carry, described once; the tables above link here."];
  for (const [name, zodSchema] of Object.entries(records)) {
    const schema = toJsonSchema(zodSchema, "output", name);
    out.push("", `### ${name}`, "");
    // Expand the type itself: only the types inside it are links.
    const inner: NamedTypes = new Map([...named].filter(([key]) => key !== namedKey(schema)));
    out.push(...payload(schema, inner, undefined));
    const ex = example(root, name);
    if (ex) out.push("", ...exampleBlocks(ex, name, (v) => v, "Example"));
  }
  return out;
}

function errorSections({ named, errorLink }: Page): string[] {
  const out = [
    "",
    "## Error codes",
    "",
    "Standard JSON-RPC codes first; application codes are in the server range -32000…-32099. " +
      "`error.message` starts with the meaning; codes with data carry it in `error.data`.",
    "",
    table(
      ["Code", "Name", "Meaning", "When"],
      errorNames().map((name) => [String(ErrorCodes[name]), hasData(name) ? errorLink(name) : code(name), cell(ErrorTable[name].meaning), cell(ErrorTable[name].doc)]),
    ),
  ];
  for (const name of errorNames().filter(hasData)) {
    const schema = toJsonSchema(ErrorData[name as keyof typeof ErrorData], "output", `${name} data`);
    out.push("", `### ${name} data`, "", `Code ${ErrorCodes[name]}.`, "", ...payload(schema, named, { what: "Data", typeName: "error.data" }));
  }
  return out;
}
