/**
 * What `agentwire serve` loads once its flags are parsed, as one dynamic
 * import of the CLI rather than four (server, start-failure, configured-store,
 * process-group): every import() target is an entry of the bundle, and the
 * bundler gives each set of entries that share a file a chunk of its own, so
 * fewer entries on the start path mean fewer, larger files to resolve, read,
 * compile and link before the listening line.
 */
export { startServer } from "./server.js";
export { knownStartFailure } from "./start-failure.js";
export { describeStore } from "./store/configured-store.js";
export { killAllProcessGroups } from "./tools/process-group.js";
