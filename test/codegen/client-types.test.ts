/**
 * The generated client's types: they compile on their own (a copy of the
 * folder, browser libs, no @types/node, no protocol/), they narrow as a caller
 * expects, an editor's hover shows each field's protocol description, and an
 * experimental method is marked. The emitters are run on an injected
 * inventory for the last part, since no real method is experimental yet.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { requests, notifications } from "../../protocol/inventory.js";
import { emitClientIndex } from "../../src/codegen/client-emitter.js";
import { emitClientTypes, type ClientInventory } from "../../src/codegen/client-types.js";
import { methodsBlock } from "../../src/codegen/methods-block.js";
import { emitNamedType, NamedTypes, typeExpr } from "../../src/codegen/ts-types.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const schema = JSON.parse(readFileSync(join(root, "protocol/schema.json"), "utf8")) as {
  definitions: Record<string, { properties: Record<string, { description: string }> }>;
};

/** What a caller writes; every line must compile, every @ts-expect-error must be an error. */
const USAGE = `
import {
  AgentwireClient, AgentwireConnectionError, ErrorCodes, isRpcError,
  type ConversationGetParams, type ConversationRecord, type MessageRecord, type RequestParams,
  type ToolPendingNotification,
} from "./index.js";

export async function usage(client: AgentwireClient, signal: AbortSignal): Promise<void> {
  const params: ConversationGetParams = { conversationId: "c_1" };
  const got = await client.conversation.get(params, { signal, timeoutMs: 5000 });
  await client.tools.list({ signal });
  await client.conversation.list(undefined, { timeoutMs: 10 });
  await client.step({ conversationId: "c", autoConfirm: 3 });
  const record: ConversationRecord = got.records![0];
  if (record.type === "tool_call") record.status.toUpperCase();
  else if (record.type === "compaction") record.summary.toUpperCase();
  else if (record.type === "reasoning") record.content.toUpperCase();
  else record.role satisfies "system" | "user" | "assistant";
  const message: MessageRecord | undefined = undefined;
  void message;
  try {
    await client.message.append({ conversationId: "c", role: "user", content: "hi" });
  } catch (e) {
    if (isRpcError(e, "INVALID_PARAMS")) e.data.issues[0].path.toUpperCase();
    if (isRpcError(e, "CONVERSATION_NOT_FOUND")) {
      e.data.conversationId.toUpperCase();
      const code: -32010 = e.code;
      void code;
      // @ts-expect-error CONVERSATION_NOT_FOUND carries no issues
      void e.data.issues;
    }
    if (isRpcError(e, "INTERNAL_ERROR")) {
      const none: undefined = e.data;
      void none;
    }
    if (e instanceof AgentwireConnectionError && e.code === "ABORTED") void e.cause;
  }
  const code: number = ErrorCodes.INVALID_PARAMS;
  void code;
  // @ts-expect-error role must be user, system or assistant
  await client.message.append({ conversationId: "c", role: "tool", content: "x" });
  // @ts-expect-error conversationId is required
  await client.conversation.get({});
  // @ts-expect-error unknown option
  await client.tools.list({ retries: 3 });
  // @ts-expect-error no such error name
  isRpcError(undefined, "NO_SUCH_CODE");
  const explicit: RequestParams<"conversation.update"> = { conversationId: "c", model: null };
  void explicit;
  await AgentwireClient.connect("ws://x", { experimentalApi: true, capabilities: { notificationOptOut: ["tool_output"] } });
  // Notifications extend the shared field sets: the inherited fields are there, typed and documented.
  client.on("tool_pending", (pending: ToolPendingNotification) => {
    const seq: number = pending.seq;
    const generationId: string = pending.generationId;
    pending.toolName.toUpperCase();
    void pending.arguments;
    void [seq, generationId];
  });
  client.on("error", (failed) => {
    // @ts-expect-error an error event's generationId may be null
    const generationId: string = failed.generationId;
    void [generationId, failed.code, failed.status];
  });
}
`;

let dir: string;
let service: ts.LanguageService;
const usagePath = () => join(dir, "usage.ts");

beforeAll(() => {
  // A copy of the folder alone: proves it needs nothing from protocol/, zod or @types/node.
  dir = mkdtempSync(join(tmpdir(), "agentwire-client-types-"));
  for (const file of readdirSync(join(root, "clients/typescript"))) copyFileSync(join(root, "clients/typescript", file), join(dir, file));
  writeFileSync(usagePath(), USAGE);
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
  };
  const files = readdirSync(dir).map((f) => join(dir, f));
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => files,
    getScriptVersion: () => "1",
    getScriptSnapshot: (path) => (ts.sys.fileExists(path) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(path)!) : undefined),
    getCurrentDirectory: () => dir,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
  };
  service = ts.createLanguageService(host, ts.createDocumentRegistry());
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * What an editor shows when hovering the `occurrence`-th match of `text` in
 * usage.ts, whitespace folded (wrapped JSDoc lines render as one paragraph).
 */
function hover(text: string, occurrence = 1): string {
  let at = -1;
  for (let i = 0; i < occurrence; i++) at = USAGE.indexOf(text, at + 1);
  expect(at, text).toBeGreaterThanOrEqual(0);
  const info = service.getQuickInfoAtPosition(usagePath(), at);
  const tags = (info?.tags ?? []).map((t) => `@${t.name} ${ts.displayPartsToString(t.text)}`);
  return [ts.displayPartsToString(info?.documentation), ...tags].join(" ").replace(/\s+/g, " ");
}

// Building the program loads the DOM lib: a few seconds on this machine.
describe("the generated client's types", { timeout: 30_000 }, () => {
  it("compile alone, in a copy of the folder, with browser libs only", () => {
    const program = service.getProgram()!;
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(diagnostics).toEqual([]);
    const sources = program.getSourceFiles().map((f) => f.fileName).filter((f) => !f.includes("/typescript/lib/"));
    expect(sources.every((f) => f.startsWith(dir)), sources.join("\n")).toBe(true);
  });

  it("show each field's protocol description on hover", () => {
    const conversationId = schema.definitions.ConversationGetParams.properties.conversationId.description;
    expect(hover("conversationId: \"c_1\"")).toContain(conversationId);
    expect(hover("conversationId: \"c_1\"")).toContain("@pattern ^[A-Za-z0-9_-]{1,128}$");
    // A field of a shared record, reached through a result.
    expect(hover("status.toUpperCase")).toContain(schema.definitions.ToolCallRecord.properties.status.description);
    // A request method, with its errors; a per-call option; an error code and its data.
    expect(hover("get(params")).toContain("`conversation.get`: A conversation with its live state");
    expect(hover("get(params")).toContain("CONVERSATION_NOT_FOUND (-32010)");
    expect(hover("timeoutMs: 5000")).toContain("overrides `requestTimeoutMs`");
    expect(hover("INVALID_PARAMS;")).toContain("Invalid method parameters");
    expect(hover("path.toUpperCase")).toContain("dot-and-bracket notation");
    expect(hover("experimentalApi: true")).toContain("capabilities.experimentalApi: true");
    // Fields a notification inherits from a shared field set keep the base's description.
    const pending = schema.definitions.ToolPendingNotification.properties;
    expect(hover("seq;")).toContain(pending.seq.description);
    expect(hover("toolName.toUpperCase")).toContain(pending.toolName.description);
  });
});

describe("experimental methods (injected inventory)", () => {
  const inventory: ClientInventory = {
    requests: {
      ...requests,
      "conversation.fork": {
        params: z.strictObject({ conversationId: z.string().describe("The conversation to copy.") }).describe("Parameters of conversation.fork."),
        result: z.object({ id: z.string().describe("The copy's id.") }).describe("Result of conversation.fork."),
        description: "Copy a conversation with all its records. The copy starts idle.",
        errors: ["CONVERSATION_NOT_FOUND"],
        scope: "conversation",
        experimental: "the copy's title and settings rules may still change",
      },
    },
    notifications,
  };

  it("carry @experimental and the reason in the method's and the method map's JSDoc", () => {
    const index = emitClientIndex("1.0", inventory);
    expect(index).toMatch(/\* @experimental the copy's title and settings rules may still change\n {3}\*\/\n {2}fork\(params: ConversationForkParams, options\?: RequestOptions\): Promise<ConversationForkResult>;/);
    expect(index.match(/@experimental/g)).toHaveLength(1);
    const types = emitClientTypes("1.0", inventory);
    expect(types).toMatch(/@experimental the copy's title and settings rules may still change\n {3}\*\/\n {2}"conversation\.fork": \{/);
    expect(types).toContain("export interface ConversationForkParams {\n  /** The conversation to copy. */\n  conversationId: string;\n}");
    expect(emitClientIndex("1.0")).not.toContain("@experimental"); // none in the real inventory yet
  });

  it("are marked in the method list of the guides", () => {
    const block = methodsBlock(inventory).content;
    expect(block).toContain(
      "- [`conversation.fork`](reference/protocol.md#conversationfork) — Copy a conversation with all its records. *Experimental* (needs `capabilities.experimentalApi`): the copy's title and settings rules may still change\n",
    );
  });
});

describe("JSON Schema → TypeScript", () => {
  const none = new NamedTypes({});
  const t = (s: Record<string, unknown>) => typeExpr(s, none, "", "test");

  it("expresses nullable, enums, consts, unions, records and arrays", () => {
    expect(t({ type: ["string", "null"] })).toBe("string | null");
    expect(t({ anyOf: [{ type: "integer" }, { type: "null" }] })).toBe("number | null");
    expect(t({ type: "string", enum: ["a", "b"] })).toBe('"a" | "b"');
    expect(t({ type: "string", const: "x" })).toBe('"x"');
    expect(t({ anyOf: [{ type: "boolean" }, { type: "integer", minimum: 0 }] })).toBe("boolean | number");
    expect(t({ type: "object", propertyNames: { type: "string" }, additionalProperties: {} })).toBe("Record<string, unknown>");
    expect(t({ type: "object", properties: {}, additionalProperties: false })).toBe("Record<string, never>");
    expect(t({ type: "array", items: { type: ["string", "null"] } })).toBe("Array<string | null>");
    expect(t({ type: "array", items: { type: "number" } })).toBe("number[]");
    expect(t({})).toBe("unknown");
    expect(t({ type: "object", properties: { "a-b": { type: "string", description: "Dashed." } }, required: [] })).toBe(
      '{\n  /** Dashed. */\n  "a-b"?: string;\n}',
    );
  });

  it("references a shared type by name wherever the shape is the same, whatever its description", () => {
    const shared = { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false };
    const named = new NamedTypes({ Thing: { ...shared, description: "A thing." } });
    expect(typeExpr({ type: "array", items: { ...shared, description: "Other words." } }, named, "", "test")).toBe("Thing[]");
    expect(typeExpr({ ...shared, required: [] }, named, "", "test")).not.toBe("Thing");
  });

  it("extends a shared object type whose every field it holds with the identical schema, and writes only its own", () => {
    const field = (description: string) => ({ type: "string", description });
    const named = new NamedTypes({
      Base: { type: "object", properties: { a: field("A."), b: field("B.") }, required: ["a", "b"], additionalProperties: false },
      Small: { type: "object", properties: { a: field("A.") }, required: ["a"], additionalProperties: false },
      Other: { type: "object", properties: { c: field("C.") }, required: ["c"], additionalProperties: false },
    });
    const object = (properties: Record<string, unknown>, required: string[]) => ({
      type: "object",
      properties,
      required,
      additionalProperties: false,
    });
    // Base covers Small's field, so Small is not named too; Other is disjoint and joins.
    const emit = (name: string, schema: Record<string, unknown>) => emitNamedType(name, schema, named).join("\n");
    expect(emit("Thing", object({ a: field("A."), b: field("B."), c: field("C."), d: field("D.") }, ["a", "b", "c", "d"]))).toBe(
      "export interface Thing extends Base, Other {\n  /** D. */\n  d: string;\n}",
    );
    // Every field inherited: an empty body.
    expect(emit("Both", object({ a: field("A."), b: field("B."), c: field("C.") }, ["a", "b", "c"]))).toBe(
      "export interface Both extends Base, Other {}",
    );
    // A field with another description, or another optionality, is not the base's field: no extends for it.
    expect(emit("Reworded", object({ a: field("A, said otherwise."), b: field("B."), d: field("D.") }, ["a", "b", "d"]))).toMatch(
      /^export interface Reworded \{\n/,
    );
    expect(emit("Loose", object({ a: field("A."), b: field("B."), d: field("D.") }, ["a", "d"]))).toMatch(
      /^export interface Loose extends Small \{\n {2}\/\*\* B\. \*\/\n {2}b\?: string;/,
    );
  });

  it("refuses what it cannot express instead of dropping it", () => {
    expect(() => t({ allOf: [{ type: "string" }] })).toThrow(/test uses allOf/);
    expect(() => t({ type: "array", items: [{ type: "string" }] })).toThrow(/tuple/);
    expect(() => t({ type: "object", propertyNames: { pattern: "^a" } })).toThrow(/propertyNames/);
  });
});
