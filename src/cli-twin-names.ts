/**
 * What the bundle's build (src/build/commonjs-twins.ts) and the bin's loader
 * (src/cli-loader.ts) agree on about the CommonJS twins of the bundle's files.
 */

/** What a twin calls for `import(…)`: as long as `import`, so columns stay where the file's source map puts them. */
export const DYNAMIC_IMPORT = "__dimp";

/** The file that lists every twin with a digest of its text (part of its code cache's name). */
export const TWIN_MANIFEST = "cjs-twins.json";

/** What a twin reads for `import.meta` (its `url`, the ES module's, and `resolve`). */
export const IMPORT_META = "__importMeta";

/** The parameters of the function each twin is (the build writes it around the code; the loader calls it with them in this order). */
export const TWIN_PARAMETERS = ["exports", "require", "module", IMPORT_META, DYNAMIC_IMPORT] as const;

/** The bundle's file the bin runs from its twin: the command line (src/cli.ts). */
export const CLI_MAIN = "cli-main.mjs";

/** `x.mjs` → `x.cjs`. */
export const twinName = (name: string) => name.replace(/\.mjs$/, ".cjs");
