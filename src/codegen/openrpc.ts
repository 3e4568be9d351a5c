/**
 * protocol/openrpc.json: the OpenRPC 1.3 document of the protocol, derived
 * from the inventory. Notifications and the error table have no place in
 * OpenRPC, so they go under the `x-notifications` and `x-error-codes`
 * extensions; each error code's `data` shape, when it has one, is its `data`
 * schema there. An experimental method carries `x-experimental` (the reason).
 * Every method carries `x-scope`, what it acts on (conversation, connection
 * or server; see MethodScope in protocol/inventory.ts).
 */
import { ErrorCodes, ErrorData, ErrorMeanings, ErrorTable, type ErrorCodeName } from "../../protocol/errors.js";
import {
  notifications,
  notificationTypeName,
  requests,
  requestTypeNames,
  type RequestEntry,
} from "../../protocol/inventory.js";
import { GENERATED_NOTE, toJsonSchema, type JsonSchema } from "./json-schema.js";

export interface OpenRpcInputs {
  packageVersion: string;
  protocolVersion: string;
}

export function buildOpenRpcDocument(inputs: OpenRpcInputs): JsonSchema {
  const errorObject = (name: ErrorCodeName) => ({ code: ErrorCodes[name], message: ErrorMeanings[name] });

  const methods = Object.entries(requests as Record<string, RequestEntry>).map(([method, entry]) => {
    const names = requestTypeNames(method);
    const params = toJsonSchema(entry.params, "input", `${method} params`);
    const result = toJsonSchema(entry.result, "output", `${method} result`);
    const properties = (params.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((params.required ?? []) as string[]);
    return {
      name: method,
      description: entry.description,
      paramStructure: "by-name",
      params: Object.entries(properties).map(([name, schema]) => ({
        name,
        ...describedBy(schema),
        required: required.has(name),
        schema,
      })),
      result: { name: names.result, ...describedBy(result), schema: result },
      errors: methodErrors(method, entry).map(errorObject),
      "x-params-type": names.params,
      "x-scope": entry.scope,
      ...(entry.experimental ? { "x-experimental": entry.experimental } : {}),
    };
  });

  return {
    openrpc: "1.3.2",
    "x-generated": GENERATED_NOTE,
    info: {
      title: "agentwire",
      version: inputs.packageVersion,
      description:
        "Agent protocol server: runs LLM agents with tools, driven over one WebSocket speaking JSON-RPC 2.0. " +
        "Send `initialize` first. Params are always an object (by name). Notifications (`x-notifications`) " +
        "are pushed by the server; every error code is listed in `x-error-codes`.",
      "x-protocol-version": inputs.protocolVersion,
    },
    methods,
    "x-notifications": Object.entries(notifications).map(([method, entry]) => {
      const params = toJsonSchema(entry.params, "output", `${method} notification`);
      return { name: method, description: entry.description, params: { name: notificationTypeName(method), ...describedBy(params), schema: params } };
    }),
    "x-error-codes": (Object.keys(ErrorCodes) as ErrorCodeName[]).map((name) => ({
      name,
      ...errorObject(name),
      description: ErrorTable[name].doc,
      ...(name in ErrorData ? { data: toJsonSchema(ErrorData[name as keyof typeof ErrorData], "output", `${name} data`) } : {}),
    })),
  };
}

/**
 * The errors a method lists: its application errors, then INVALID_PARAMS when
 * it has fields to get wrong. The other standard codes apply to any call.
 * Takes the entry, not just the name, so the client emitter can be run on an
 * injected inventory in tests.
 */
export function methodErrors(method: string, entry: RequestEntry): ErrorCodeName[] {
  const errors: ErrorCodeName[] = [...entry.errors];
  const params = toJsonSchema(entry.params, "input", `${method} params`);
  if (Object.keys((params.properties ?? {}) as object).length > 0) errors.push("INVALID_PARAMS");
  return [...new Set(errors)];
}

function describedBy(schema: JsonSchema): { description?: string } {
  return typeof schema.description === "string" ? { description: schema.description } : {};
}
