/**
 * A start floor above the bare ws server: a ws server that first builds
 * agentwire's configuration schemas (protocol/config.ts and what it imports,
 * zod) and parses one empty configuration file with them — the least a
 * server validating agentwire's configuration with its zod schemas pays
 * before it listens. processes.ts bundles this file the way the shipped
 * bundle is built (esbuild, ESM, one file) and runs the bundle: it prints
 * `listening on PORT`.
 */
import { WebSocketServer } from "ws";
import { AgentwireConfigFile } from "../protocol/config.js";

AgentwireConfigFile.parse({});
const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
wss.on("listening", () => {
  const address = wss.address();
  process.stdout.write(`listening on ${typeof address === "object" && address ? address.port : address}\n`);
});
