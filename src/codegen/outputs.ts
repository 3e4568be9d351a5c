/**
 * Every generated file and its exact content, keyed by path from the
 * repository root. Pure apart from reading package.json, errors.ts and the
 * client runtime template, so `generate.ts` can write it or compare it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROTOCOL_VERSION } from "../../protocol/version.js";
import { emitClientIndex, emitClientRuntime } from "./client-emitter.js";
import { buildSchemaDocument } from "./json-schema.js";
import { buildOpenRpcDocument } from "./openrpc.js";

export function renderOutputs(root: string): Map<string, string> {
  const read = (path: string) => readFileSync(join(root, path), "utf8");
  const packageVersion = (JSON.parse(read("package.json")) as { version: string }).version;
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const openrpc = buildOpenRpcDocument({
    packageVersion,
    protocolVersion: PROTOCOL_VERSION,
    errorsSource: read("protocol/errors.ts"),
  });
  return new Map<string, string>([
    ["protocol/openrpc.json", json(openrpc)],
    ["protocol/schema.json", json(buildSchemaDocument(PROTOCOL_VERSION))],
    ["clients/typescript/runtime.ts", emitClientRuntime(read("src/codegen/client-runtime.ts"))],
    ["clients/typescript/index.ts", emitClientIndex(PROTOCOL_VERSION)],
  ]);
}
