/**
 * protocol/config.schema.json: the JSON Schema of agentwire.json, so an
 * editor completes and checks the file when it says
 * `"$schema": "./node_modules/agentwire/protocol/config.schema.json"` (or a
 * path to a checkout).
 */
import * as z from "zod";
import { AgentwireConfigFile } from "../../protocol/config.js";
import { GENERATED_NOTE, type JsonSchema } from "./json-schema.js";

export function buildConfigSchema(): JsonSchema {
  // Draft-07: what most editors (VS Code's JSON language service) understand.
  const schema = z.toJSONSchema(AgentwireConfigFile, { target: "draft-7", io: "input" }) as JsonSchema;
  return { ...schema, title: "agentwire.json", $comment: GENERATED_NOTE };
}
