/**
 * Everything `npm run gen` owns: whole generated files (keyed by path from
 * the repository root, with their exact content) and generated blocks inside
 * hand-written files. Pure apart from reading package.json (and, for the
 * protocol reference's examples, test/fixtures/protocol/), so
 * `generate.ts` can write it or compare it.
 *
 * clients/typescript/runtime.ts is hand-written and not listed: codegen
 * imports it (client-emitter.ts) but never writes it. Likewise the Python
 * client's runtime.py and __init__.py: codegen reads runtime.py (for the
 * names generated members must not take) but never writes it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROTOCOL_VERSION } from "../../protocol/version.js";
import type { GeneratedBlock } from "./blocks.js";
import { emitClientIndex } from "./client-emitter.js";
import { emitClientErrors, emitClientTypes } from "./client-types.js";
import { editorConfigSchema } from "./config-schema.js";
import { helpBlock } from "./help-block.js";
import { buildSchemaDocument } from "./json-schema.js";
import { methodsBlock } from "./methods-block.js";
import { emitMethodTable, METHOD_TABLE_PATH } from "./method-table.js";
import { buildOpenRpcDocument } from "./openrpc.js";
import { emitPythonErrors, emitPythonMethods, emitPythonTypes, PYTHON_PACKAGE, readRuntime } from "./python-emitter.js";
import { BUILTIN_TOOL_SCHEMAS_PATH, emitBuiltinToolSchemas } from "./builtin-tool-schemas.js";
import { CONFIG_DEFAULTS_PATH, CONFIG_TABLE_PATH, emitConfigDefaults, emitConfigTable } from "./config-table.js";
import { emitParamsData, PARAMS_DATA_PATH } from "./params-data.js";
import { CONFIG_REFERENCE_PATH, renderConfigReference } from "./reference-config.js";
import { PROTOCOL_REFERENCE_PATH, renderProtocolReference } from "./reference-protocol.js";

export function renderOutputs(root: string): Map<string, string> {
  const packageVersion = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const openrpc = buildOpenRpcDocument({ packageVersion, protocolVersion: PROTOCOL_VERSION });
  return new Map<string, string>([
    ["protocol/openrpc.json", json(openrpc)],
    ["protocol/schema.json", json(buildSchemaDocument(PROTOCOL_VERSION))],
    ["protocol/config.schema.json", json(editorConfigSchema())],
    [METHOD_TABLE_PATH, emitMethodTable()],
    ["clients/typescript/types.ts", emitClientTypes(PROTOCOL_VERSION)],
    ["clients/typescript/errors.ts", emitClientErrors()],
    ["clients/typescript/index.ts", emitClientIndex(PROTOCOL_VERSION)],
    [`${PYTHON_PACKAGE}/types.py`, emitPythonTypes(PROTOCOL_VERSION)],
    [`${PYTHON_PACKAGE}/errors.py`, emitPythonErrors()],
    [`${PYTHON_PACKAGE}/methods.py`, emitPythonMethods(PROTOCOL_VERSION, readRuntime(root))],
    [PROTOCOL_REFERENCE_PATH, renderProtocolReference(root)],
    [CONFIG_REFERENCE_PATH, renderConfigReference()],
    [BUILTIN_TOOL_SCHEMAS_PATH, emitBuiltinToolSchemas()],
    [CONFIG_TABLE_PATH, emitConfigTable()],
    [CONFIG_DEFAULTS_PATH, emitConfigDefaults()],
    [PARAMS_DATA_PATH, emitParamsData()],
  ]);
}

/** Generated blocks in the guides: the method list (docs/clients.md) and `agentwire --help` (docs/configuration.md). */
export function renderBlocks(): GeneratedBlock[] {
  return [methodsBlock(), helpBlock()];
}
