/**
 * protocol/method-table.ts: what the server needs to know of every method
 * before it validates anything — the request names with their scope,
 * runsOn, holdsAnswer and experimental reason, and the notification names —
 * read off protocol/inventory.ts and written as plain data. The server's
 * start path (dispatcher, scope binding, initialize) reads this table;
 * inventory.ts and the zod schemas it lists are loaded on the first request
 * that validates params (src/rpc/dispatcher.ts). inventory.ts stays the one
 * place a method is declared: gen:check fails when this copy drifts.
 */
import { notifications, requests, type RequestEntry } from "../../protocol/inventory.js";
import { TS_BANNER } from "./json-schema.js";

export const METHOD_TABLE_PATH = "protocol/method-table.ts";

export function emitMethodTable(): string {
  const rows = Object.entries(requests as Record<string, RequestEntry>).map(([method, entry]) => {
    const fields = [`scope: ${JSON.stringify(entry.scope)}`];
    if (entry.runsOn !== undefined) fields.push(`runsOn: ${JSON.stringify(entry.runsOn)}`);
    if (entry.holdsAnswer !== undefined) fields.push(`holdsAnswer: { param: ${JSON.stringify(entry.holdsAnswer.param)}, defaultMs: ${entry.holdsAnswer.defaultMs} }`);
    if (entry.experimental !== undefined) fields.push(`experimental: ${JSON.stringify(entry.experimental)}`);
    return `  ${JSON.stringify(method)}: { ${fields.join(", ")} },`;
  });
  return [
    TS_BANNER,
    "/**",
    " * Every request's name with what the server needs before it validates its",
    " * params (scope, runsOn, holdsAnswer, experimental: see RequestEntry in",
    " * inventory.ts), and every notification's name: plain data, no zod, for the",
    " * server's start path. inventory.ts, which holds the schemas, is loaded on",
    " * the first request (src/rpc/dispatcher.ts).",
    " */",
    'import type { MethodScope, RequestMethod, NotificationMethod } from "./inventory.js";',
    "",
    "export interface MethodTableEntry {",
    "  scope: MethodScope;",
    '  runsOn?: "owner" | "caller";',
    "  holdsAnswer?: { param: string; defaultMs: number };",
    "  experimental?: string;",
    "}",
    "",
    "export const methodTable: Readonly<Record<RequestMethod, MethodTableEntry>> = {",
    ...rows,
    "};",
    "",
    "export const notificationNames: readonly NotificationMethod[] = [",
    ...Object.keys(notifications).map((name) => `  ${JSON.stringify(name)},`),
    "];",
    "",
  ].join("\n");
}
