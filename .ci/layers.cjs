/**
 * The layers of agentwire, lowest first, checked by dependency-cruiser in CI
 * (`npm run layers`): a module may import from its own layer or any layer
 * below it, never from a layer above, and no import cycle is allowed. The
 * picture and the reasons are in docs/development.md#layers.
 */
const LAYERS = [
  { name: "protocol", paths: ["^protocol/"] },
  { name: "base", paths: ["^src/(ids|lazy-commonjs|monotonic-ms|server-version|usage-error)\\.ts$", "^src/logging/", "^src/rpc/"] },
  { name: "config", paths: ["^src/config/"] },
  { name: "store / llm / tools / runtimes", paths: ["^src/store/", "^src/llm/", "^src/tools/", "^src/runtimes/"] },
  { name: "attachments / skills / mcp / history", paths: ["^src/attachments/", "^src/skills/", "^src/mcp/", "^src/history/"] },
  { name: "context", paths: ["^src/context/"] },
  { name: "sessions", paths: ["^src/sessions/"] },
  { name: "generation / cluster / metrics", paths: ["^src/generation/", "^src/cluster/", "^src/metrics/"] },
  { name: "handlers", paths: ["^src/handlers/", "^src/app\\.ts$"] },
  { name: "transport / server", paths: ["^src/transport/", "^src/server\\.ts$", "^src/start-failure\\.ts$", "^src/embed\\.ts$"] },
  { name: "cli", paths: ["^src/(cli|cli-loader|cli-twin-names|cli-options|cli-program|cli-help|process-secrets|token-file|serve-start)\\.ts$", "^src/chat/", "^src/acp/"] },
  { name: "codegen", paths: ["^src/codegen/"] },
  { name: "build", paths: ["^src/build/"] },
];

const any = (paths) => paths.join("|");

const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `no-import-up-from-${layer.name.replace(/[^a-z]+/g, "-")}`,
  comment: `${layer.name} may not import from a layer above it (${LAYERS.slice(i + 1).map((l) => l.name).join(", ")})`,
  severity: "error",
  from: { path: any(layer.paths) },
  to: { path: any(LAYERS.slice(i + 1).flatMap((l) => l.paths)) },
}));

module.exports = {

  forbidden: [
    { name: "no-cycle", comment: "no import cycle, type-only imports included", severity: "error", from: {}, to: { circular: true } },
    // A module outside every layer would escape the rules below: a new folder or top-level file of
    // src/ must be given its layer here before it imports or is imported.
    {
      name: "every-module-in-a-layer",
      comment: "this module is in no layer: give its folder or file a layer in .ci/layers.cjs",
      severity: "error",
      from: { path: "^(src|protocol)/", pathNot: any(LAYERS.flatMap((l) => l.paths)) },
      to: {},
    },
    {
      name: "every-import-in-a-layer",
      comment: "this import reaches a module in no layer: give its folder or file a layer in .ci/layers.cjs",
      severity: "error",
      from: {},
      to: { path: "^(src|protocol)/", pathNot: any(LAYERS.flatMap((l) => l.paths)) },
    },
    ...upward,
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    // Type-only imports count: a type pointing up a layer is a dependency pointing up.
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
  },
};
