/**
 * The shipped server starts without building the protocol's method schemas:
 * in dist/bundle, protocol/inventory.ts and the request, result and event
 * schemas only it needs are a chunk of their own (inventory-*.mjs), which a
 * `serve` process has not loaded when it prints its listening line, nor
 * after valid requests (checked with protocol/params-data.ts, plain data), and
 * loads on the first request whose params that cannot decide, such as an
 * invalid one (src/rpc/dispatcher.ts, Dispatcher.schemas). Kept
 * there by protocol/method-table.ts (what the start path reads instead) and
 * package.json's "sideEffects" (so a constant imported through
 * protocol/index.ts does not drag its module's schemas in).
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AgentwireClient } from "../../clients/typescript/index.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { killAllCli, runCli } from "../harness/cli-process.js";
import { eventually } from "../harness/eventually.js";
import { loadedModules, recordModuleLoads } from "../harness/module-loads.js";
import { shippedBundle } from "../harness/shipped-bundle.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "agentwire-start-schemas-"));
});
afterAll(async () => {
  await killAllCli();
  await rm(root, { recursive: true, force: true });
});

/**
 * The protocol modules the start path may build, and why: the configuration is
 * parsed at start from its schema as data (src/config/config-table.ts, with the
 * defaults in config-defaults.ts), not from protocol/config.ts, which a
 * configuration loads only when it needs zod (an error, a refined key); the
 * server reads the defaults and patterns of tools, modes, conversation
 * settings, providers and MCP servers from files without schemas
 * (tool-defaults.ts, mode-table.ts, settings-defaults.ts,
 * provider-defaults.ts, mcp-defaults.ts) and parses a provider's definition
 * as data, the tool kinds are in a file of its own (so as not to bring
 * records.ts, tools.ts or usage.ts), the built-in tools' parameters are data
 * (src/tools/builtin-tool-schemas.ts; their zod schemas, with ask_user's input
 * form and update_plan's plan entries, load for a call the data refuses), the
 * lowdb store checks an asset's image type against a list (limits/attachments.ts),
 * every RpcError carries a code and its meaning
 * (error-codes.ts, without errors.ts's data schemas), and the rest hold no schema
 * or a few the start path reads (schema-data.ts, the parse of the
 * configuration's and the params' data, with the rules it runs,
 * schema-rules.ts). Every other protocol module (records.ts,
 * usage.ts, tools.ts, attachments.ts, file-changes.ts, plan.ts, errors.ts,
 * session.ts, conversation.ts, messages.ts, events.ts, …, inventory.ts) is only
 * needed by requests, a stored conversation or codegen: built on the first one.
 */
const START_PATH_PROTOCOL = new Set([
  "config-defaults.ts", "config-trust-paths.ts", "system-prompt-template.ts", "tool-defaults.ts", "mode-table.ts", "settings-defaults.ts",
  "provider-defaults.ts", "mcp-defaults.ts", "config-meta.ts", "tool-kind.ts", "schema-data.ts", "schema-rules.ts",
  "error-codes.ts", "history.ts", "issue-path.ts", "version.ts", "method-table.ts",
]);

/** The protocol/ sources (as "records.ts", "limits/commands.ts") of the bundle chunks among `loaded`, read from their source maps. */
async function protocolModules(loaded: Set<string>): Promise<string[]> {
  const found = new Set<string>();
  for (const path of loaded) {
    if (!/[\\/]dist[\\/]bundle[\\/][^\\/]+\.mjs$/.test(path)) continue;
    const map = JSON.parse(await readFile(`${path}.map`, "utf8")) as { sources: string[] };
    for (const source of map.sources) {
      const match = /^(?:\.\.\/)+protocol\/(.+\.ts)$/.exec(source);
      if (match) found.add(match[1]!);
    }
  }
  return [...found].sort();
}

/** The bundle chunks among `loaded` that hold zod's own code (node_modules/zod), read from their source maps. */
async function zodChunks(loaded: Set<string>): Promise<string[]> {
  const found: string[] = [];
  for (const path of loaded) {
    if (!/[\\/]dist[\\/]bundle[\\/][^\\/]+\.mjs$/.test(path)) continue;
    const map = JSON.parse(await readFile(`${path}.map`, "utf8")) as { sources: string[] };
    if (map.sources.some((source) => /node_modules\/zod\//.test(source))) found.push(path);
  }
  return found;
}

/** The inventory chunk (dist/bundle/inventory-HASH.mjs) among the files a process loaded. */
const inventoryChunks = (loaded: Set<string>) => [...loaded].filter((path) => /[\\/]dist[\\/]bundle[\\/]inventory-[^\\/]+\.mjs$/.test(path));

it("serve prints its listening line without loading the method schemas' chunk, answers valid requests without it, and loads it for an invalid one", async () => {
  const loads = join(root, "loads.txt");
  const cli = runCli(
    ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", join(root, "data"), "--log-level", "warn"],
    { ...recordModuleLoads(loads), OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    shippedBundle(),
  );
  const url = await cli.listening(20_000);
  const atStart = await loadedModules(loads);
  expect([...atStart].some((path) => path.endsWith("cli.cjs"))).toBe(true);
  expect(inventoryChunks(atStart)).toEqual([]);
  const built = await protocolModules(atStart);
  expect(built).toContain("config-defaults.ts");
  // The configuration's zod schema (config.ts, and what only it imports) waits for a configuration that needs it.
  const configSchemas = ["config.ts", "config-history.ts", "config-runtimes.ts", "config-tools.ts", "config-providers.ts", "config-mcp.ts", "modes.ts", "conversation-settings.ts"];
  expect(built.filter((name) => configSchemas.includes(name))).toEqual([]);
  // The records and what they import wait for a request or a stored conversation (src/store/lowdb-run-state.ts).
  expect(built.filter((name) => ["records.ts", "usage.ts", "tools.ts", "attachments.ts", "file-changes.ts", "plan.ts", "errors.ts"].includes(name))).toEqual([]);
  expect(built.filter((name) => !START_PATH_PROTOCOL.has(name) && !name.startsWith("limits/"))).toEqual([]);
  // Nothing on the start path builds a zod schema: zod itself is not loaded.
  expect(await zodChunks(atStart)).toEqual([]);

  const client = await AgentwireClient.connect(url, { WebSocket });
  expect((await client.server.status()).connections).toBe(1);
  const conversation = await client.conversation.create({});
  await client.message.append({ conversationId: conversation.id, role: "user", content: "hi" });
  const afterValid = await loadedModules(loads);
  expect(inventoryChunks(afterValid)).toEqual([]);
  expect(await zodChunks(afterValid)).toEqual([]);
  // A params error after the lazy load is the schema's, naming the field.
  await expect(client.conversation.get({ conversationId: 5 as never })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("conversationId") });
  await client.close();
  await eventually(async () => inventoryChunks(await loadedModules(loads)).length === 1, 3000, "the inventory chunk recorded as loaded");
}, 30_000);

it("a configuration that needs zod loads the configuration's schema: its error in zod's words, a refined key that is valid taken", async () => {
  // A flag whose value fails: the message is the element schema's (tools.envAllow), found after the CLI loads config.ts.
  const loads = join(root, "bad-flag-loads.txt");
  const bad = runCli(["serve", "--port", "0", "--data-dir", join(root, "bad-flag"), "--tool-env", "A=B"], recordModuleLoads(loads), shippedBundle());
  expect((await bad.exited).code).toBe(2);
  expect(bad.stderr()).toContain('--tool-env takes environment variable names or NAME* prefixes, got "A=B"');
  expect(await protocolModules(await loadedModules(loads))).toContain("config.ts");

  // A file with a key checked by a named rule (systemPrompt's placeholders, schema-rules.ts): refused in zod's words...
  const dir = await mkdtemp(join(root, "refined-"));
  const file = join(dir, "agentwire.json");
  await writeFile(file, JSON.stringify({ conversations: { systemPrompt: "Hi {{nope}}" } }));
  const refused = runCli(["serve", "--port", "0", "--data-dir", join(dir, "data"), "--config", file], {}, shippedBundle());
  expect((await refused.exited).code).toBe(2);
  expect(refused.stderr()).toContain("conversations.systemPrompt: unknown placeholder {{nope}}");

  // ...and taken as data when it is valid: the server starts with it without building the configuration's schema.
  await writeFile(file, JSON.stringify({ conversations: { systemPrompt: "Work in {{workspace}}." } }));
  const takenLoads = join(root, "refined-taken-loads.txt");
  const taken = runCli(["serve", "--port", "0", "--data-dir", join(dir, "data"), "--config", file, "--log-level", "warn"], recordModuleLoads(takenLoads), shippedBundle());
  const client = await AgentwireClient.connect(await taken.listening(20_000), { WebSocket });
  expect((await client.server.status()).connections).toBe(1);
  await client.close();
  expect(await protocolModules(await loadedModules(takenLoads))).not.toContain("config.ts");
}, 60_000);

it("a one-shot chat --json builds neither the method schemas nor the records' schemas: its requests are checked as data", async () => {
  const fake = await startFakeOpenAI({ apiKey: "test-key" });
  try {
    fake.enqueue({ kind: "reply", text: ["Hi."] });
    const loads = join(root, "oneshot-loads.txt");
    const cwd = await mkdtemp(join(root, "oneshot-"));
    const env = { ...recordModuleLoads(loads), OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test-key", AGENTWIRE_MODEL: "fake-model", XDG_DATA_HOME: join(cwd, "xdg") };
    const chat = runCli(["chat", "hello", "--json"], env, shippedBundle(), cwd);
    expect((await chat.exited).code, chat.stderr()).toBe(0);
    expect(chat.stdout()).toContain('"outcome":"completed"');
    const loaded = await loadedModules(loads);
    expect(inventoryChunks(loaded)).toEqual([]);
    const built = await protocolModules(loaded);
    expect(built).toContain("params-data.ts");
    // What the start path may build, and the params' data: no records.ts, generation.ts or config.ts.
    expect(built.filter((name) => !START_PATH_PROTOCOL.has(name) && !name.startsWith("limits/") && name !== "params-data.ts")).toEqual([]);
    expect(await zodChunks(loaded)).toEqual([]);
  } finally {
    await fake.close();
  }
}, 60_000);
