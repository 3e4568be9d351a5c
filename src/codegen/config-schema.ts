/**
 * protocol/config.schema.json: the JSON Schema of agentwire.json, so an
 * editor completes and checks the file when its `"$schema"` names it. It
 * ships in the package (package.json `files`); `agentwire config --schema`
 * prints its path where agentwire is installed.
 */
import * as z from "zod";
import { CONFIG_META_KEYS } from "../../protocol/config-meta.js";
import { AgentwireConfigFile } from "../../protocol/config.js";
import { GENERATED_NOTE, type JsonSchema } from "./json-schema.js";

/**
 * The schema as zod gives it, with each key's `.meta()` (flag, env,
 * defaultText, defaultNote) beside its description: what the reference page
 * reads. `io: "input"`: the file as written, so a key with a default is not
 * required.
 */
export function buildConfigSchema(): JsonSchema {
  // Draft-07: what most editors (VS Code's JSON language service) understand.
  const schema = z.toJSONSchema(AgentwireConfigFile, { target: "draft-7", io: "input" }) as JsonSchema;
  return { ...schema, title: "agentwire.json", $comment: GENERATED_NOTE };
}

/** The editor's schema: buildConfigSchema without the meta keys, which are not JSON Schema. */
export function editorConfigSchema(): JsonSchema {
  return withoutMetaKeys(buildConfigSchema()) as JsonSchema;
}

/** A schema node without the meta keys; the keys of `properties` are names of settings (an MCP server's `env`), kept. */
function withoutMetaKeys(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutMetaKeys);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((CONFIG_META_KEYS as readonly string[]).includes(key)) continue;
    if (key === "properties" && value !== null && typeof value === "object") {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, withoutMetaKeys(schema)]));
    } else {
      // A default, const or enum is a value, not a schema: kept as it is.
      out[key] = key === "default" || key === "const" || key === "enum" ? value : withoutMetaKeys(value);
    }
  }
  return out;
}
