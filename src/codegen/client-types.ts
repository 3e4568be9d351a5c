/**
 * Emits clients/typescript/types.ts and clients/typescript/errors.ts: real
 * TypeScript types (with JSDoc from every `.describe()`) for each request's
 * params and result, each notification's params, the shared records, the
 * method maps the runtime's `request`/`on` are typed by, and the error table
 * with typed `error.data`. Both files are built from the JSON Schema the
 * documents are built from, never from zod types, so the client imports
 * nothing from protocol/ and can be copied or published alone.
 */
import { ErrorData, ErrorTable, ParamIssue, type ErrorCodeName } from "../../protocol/errors.js";
import {
  notifications,
  notificationTypeName,
  requests,
  requestTypeNames,
  type NotificationEntry,
  type RequestEntry,
} from "../../protocol/inventory.js";
import { ConversationEventBase, GenerationEventBase } from "../../protocol/events.js";
import { ConversationUsage, Cost, TokenUsage, UsageTotals } from "../../protocol/usage.js";
import {
  ConversationSettings,
  DamagedConversationEntry,
  GenerationError,
  LastError,
  ToolCall,
  ToolCallRef,
} from "../../protocol/records.js";
import { records, toJsonSchema, TS_BANNER, type JsonSchema } from "./json-schema.js";
import { docComment, firstSentence } from "./jsdoc.js";
import { emitNamedType, NamedTypes, propertyKey, typeExpr } from "./ts-types.js";

/** The two tables the client is generated from; tests pass a fake one (e.g. with an experimental method). */
export interface ClientInventory {
  requests: Readonly<Record<string, RequestEntry>>;
  notifications: Readonly<Record<string, NotificationEntry>>;
}

export const protocolInventory: ClientInventory = { requests, notifications };

/**
 * Types emitted once under their own name and referenced wherever the same
 * shape recurs: the records of schema.json; shapes that recur in the
 * client's own types or that a client names (settings inside Conversation,
 * damaged entries in results and error data, issues in error data, a model
 * call's token usage); and the field sets that
 * types extend instead of repeating them (the fields of every conversation
 * and generation event, a tool call's, a generation's error and the last one kept).
 */
export function sharedTypes(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  const fieldSets = { ConversationEventBase, GenerationEventBase, ToolCallRef, ToolCall, GenerationError, LastError };
  const recurring = { ConversationSettings, DamagedConversationEntry, ParamIssue, TokenUsage, UsageTotals, Cost, ConversationUsage };
  for (const [name, schema] of Object.entries({ ...records, ...recurring, ...fieldSets })) {
    out[name] = toJsonSchema(schema, "output", name);
  }
  return out;
}

/** `@experimental <reason>` for the JSDoc of an experimental method, nothing otherwise. */
export function experimentalTag(entry: RequestEntry): string[] {
  return entry.experimental ? ["", `@experimental ${entry.experimental}`] : [];
}

export function emitClientTypes(protocolVersion: string, inventory: ClientInventory = protocolInventory): string {
  const shared = sharedTypes();
  const named = new NamedTypes(shared);
  const seen = new Set<string>();
  const emit = (name: string, schema: JsonSchema, lead: string[]) => {
    if (seen.has(name)) throw new Error(`codegen: type name ${name} is used twice`);
    seen.add(name);
    return [...emitNamedType(name, schema, named, lead), ""];
  };
  /** A lead naming the method, unless the description already does. */
  const leadFor = (schema: JsonSchema, method: string, what: string) =>
    typeof schema.description === "string" && schema.description.includes(method) ? [] : [`${what} of \`${method}\`.`];

  const out: string[] = [
    TS_BANNER,
    ...docComment(
      [
        `Types of the agentwire protocol ${protocolVersion}, generated from protocol/ (zod → JSON Schema →` +
          " TypeScript): params and result of every request, params of every notification, the shared" +
          " records, and the method maps that type `client.request` and `client.on`. Every field carries" +
          " its protocol description; constraints TypeScript cannot express (patterns, bounds, formats)" +
          " are JSDoc tags.",
        "",
        "No imports: the client needs neither zod nor protocol/, at run time or to typecheck.",
      ],
      "",
    ),
    "",
    "/** The protocol version this client speaks, sent in `initialize`; a server of another major refuses it. */",
    `export const PROTOCOL_VERSION = ${JSON.stringify(protocolVersion)};`,
    "",
    "// ── Shared records and field sets ───────────────────────────────────────────────────────────────",
    "",
  ];
  for (const [name, schema] of Object.entries(shared)) out.push(...emit(name, schema, []));

  out.push("// ── Requests: params and results ────────────────────────────────────────────────────────────────", "");
  const requestMap: string[] = [];
  for (const [method, entry] of Object.entries(inventory.requests)) {
    const names = requestTypeNames(method);
    const params = toJsonSchema(entry.params, "input", `${method} params`);
    const result = toJsonSchema(entry.result, "output", `${method} result`);
    out.push(...emit(names.params, params, leadFor(params, method, "Params")));
    out.push(...emit(names.result, result, leadFor(result, method, "Result")));
    requestMap.push(
      ...docComment([`\`${method}\`: ${firstSentence(entry.description)}`, ...experimentalTag(entry)], "  "),
      `  ${propertyKey(method)}: { params: ${names.params}; result: ${names.result} };`,
    );
  }

  out.push("// ── Notifications ───────────────────────────────────────────────────────────────────────────────", "");
  const notificationMap: string[] = [];
  for (const [method, entry] of Object.entries(inventory.notifications)) {
    const name = notificationTypeName(method);
    const params = toJsonSchema(entry.params, "output", `${method} notification`);
    out.push(...emit(name, params, [`Params of the \`${method}\` notification.`]));
    notificationMap.push(...docComment([`\`${method}\`: ${entry.description}`], "  "), `  ${propertyKey(method)}: ${name};`);
  }

  out.push(
    "// ── Method maps ─────────────────────────────────────────────────────────────────────────────────",
    "",
    "/** Every request method with its params and result types: what `client.request(method, …)` is typed by. */",
    "export interface RequestMap {",
    ...requestMap,
    "}",
    "",
    "export type RequestMethod = keyof RequestMap;",
    'export type RequestParams<M extends RequestMethod> = RequestMap[M]["params"];',
    'export type RequestResult<M extends RequestMethod> = RequestMap[M]["result"];',
    "",
    "/** Every notification method with its params type: what `client.on(method, …)` is typed by. */",
    "export interface NotificationMap {",
    ...notificationMap,
    "}",
    "",
    "export type NotificationMethod = keyof NotificationMap;",
    "export type NotificationParams<N extends NotificationMethod> = NotificationMap[N];",
    "",
  );
  return out.join("\n");
}

/**
 * clients/typescript/errors.ts: the ErrorCodes table (each code documented
 * by its `doc` in protocol/errors.ts), the `data` each code carries, and the
 * `isRpcError` guard that narrows `error.data` by code name.
 */
export function emitClientErrors(): string {
  const shared = sharedTypes();
  const named = new NamedTypes(shared);
  const usedShared = new Set<string>();
  const dataMap: string[] = [];
  for (const [name, schema] of Object.entries(ErrorData) as Array<[ErrorCodeName, (typeof ErrorData)[keyof typeof ErrorData]]>) {
    const json = toJsonSchema(schema, "output", `${name} data`);
    // A data shape that may be absent (zod .optional()) must say so in the type.
    const optional = schema.safeParse(undefined).success ? " | undefined" : "";
    const type = typeExpr(json, named, "  ", `${name} data`, true);
    for (const sharedName of Object.keys(shared)) if (new RegExp(`\\b${sharedName}\\b`).test(type)) usedShared.add(sharedName);
    dataMap.push(...docComment([String(json.description ?? `Data of ${name}.`)], "  "), `  ${name}: ${type}${optional};`);
  }
  const out: string[] = [
    TS_BANNER,
    ...docComment(
      [
        "Every error code the server can answer with, and the `error.data` each carries. Local failures",
        "(socket closed, timeout, abort) are AgentwireConnectionError with string codes instead.",
        "",
        "```ts",
        "try { await client.conversation.get({ conversationId }); }",
        'catch (e) { if (isRpcError(e, "INVALID_PARAMS")) for (const i of e.data.issues) console.log(i.path); }',
        "```",
      ],
      "",
    ),
    'import { AgentwireRpcError } from "./runtime.js";',
    ...(usedShared.size > 0 ? [`import type { ${[...usedShared].join(", ")} } from "./types.js";`] : []),
    "",
    ...docComment(
      [
        "Error codes, by name. Standard JSON-RPC 2.0 codes first; application codes live in the" +
          " reserved server range -32000…-32099.",
      ],
      "",
    ),
    "export const ErrorCodes = {",
  ];
  for (const [name, { code, doc }] of Object.entries(ErrorTable)) out.push(...docComment([doc], "  "), `  ${name}: ${code},`);
  out.push(
    "} as const;",
    "",
    "export type ErrorCodeName = keyof typeof ErrorCodes;",
    "export type ErrorCode = (typeof ErrorCodes)[ErrorCodeName];",
    "",
    "/** The `error.data` of each code that carries one; codes not listed here carry none. */",
    "export interface ErrorDataMap {",
    ...dataMap,
    "}",
    "",
    "/** The `error.data` of code `N`: its shape from ErrorDataMap, or undefined. */",
    "export type ErrorDataOf<N extends ErrorCodeName> = N extends keyof ErrorDataMap ? ErrorDataMap[N] : undefined;",
    "",
    "/** An AgentwireRpcError known to carry code `N`, with `data` typed accordingly. */",
    "export type RpcErrorOf<N extends ErrorCodeName> = AgentwireRpcError & {",
    "  readonly code: (typeof ErrorCodes)[N];",
    "  readonly data: ErrorDataOf<N>;",
    "};",
    "",
    "/** True when `error` is the server's error `name` (by code); narrows `error.data` to that code's shape. */",
    "export function isRpcError<N extends ErrorCodeName>(error: unknown, name: N): error is RpcErrorOf<N> {",
    "  return error instanceof AgentwireRpcError && error.code === ErrorCodes[name];",
    "}",
    "",
  );
  return out.join("\n");
}
