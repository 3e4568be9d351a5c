/**
 * The exports of a CommonJS package loaded with `await import()`. Node (and
 * tsx, vitest) give them by name; the esbuild bundle, where the package
 * sits in a lazily loaded chunk, gives them only as `default`. Reading
 * `default` when it is there works in both.
 */
export function commonJsExports<T>(module: T | { default: T }): T {
  const wrapped = (module as { default?: T }).default;
  return wrapped !== undefined && wrapped !== null ? wrapped : (module as T);
}
