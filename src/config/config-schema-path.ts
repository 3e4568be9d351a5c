/**
 * Where the JSON Schema of agentwire.json is on this machine (`agentwire
 * config --schema`): protocol/config.schema.json of the package that is
 * running. The code runs from dist/bundle/*.mjs (installed, or `npm start`)
 * or from src/config/*.ts (tsx); both sit two directories below the package
 * root, but a chunk's depth is the bundler's business, so the directories
 * above this module are searched, nearest first, for the file.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SCHEMA = join("protocol", "config.schema.json");

/** The schema's absolute path; throws, naming where it looked, when the package has none. */
export function configSchemaPath(from: string = fileURLToPath(import.meta.url)): string {
  const looked: string[] = [];
  for (let dir = dirname(from), up = 0; up < 4; dir = dirname(dir), up++) {
    const candidate = join(dir, SCHEMA);
    if (existsSync(candidate)) return candidate;
    looked.push(candidate);
    if (dirname(dir) === dir) break;
  }
  throw new Error(`the configuration schema is not where this package keeps it (looked at ${looked.join(", ")})`);
}
