/**
 * The one way src/ loads a CommonJS package lazily:
 *
 *   const { Pool } = await importCommonJs(import("pg"));
 *
 * Node (and tsx, vitest) give a CommonJS package's exports by name and as
 * `default`; the esbuild bundle that ships (dist/bundle), where the package
 * sits in a lazily loaded chunk, gives most of them only as `default`, so
 * destructuring the names works from source and fails in the bundle (it did
 * for web_fetch's HTML converter and for prom-client). A CommonJS package's
 * `default` is its `module.exports` in both, so that is what this returns.
 *
 * Not for ESM packages: their `default` is whatever they chose to export as
 * default (the openai SDK's is the client class), and they need no help. The
 * `import("…")` stays written out at the call so esbuild still sees it and
 * splits the package into a chunk of its own. test/bundle/lazy-imports.test.ts
 * fails on a lazy import of a package that takes neither road.
 */
export async function importCommonJs<T>(loading: Promise<T>): Promise<T> {
  const module = await loading;
  const exported = (module as { default?: T }).default;
  return exported !== undefined && exported !== null ? exported : module;
}
