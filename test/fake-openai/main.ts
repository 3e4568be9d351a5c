/**
 * Runs the fake OpenAI server as its own process (for benchmarks):
 *   tsx test/fake-openai/main.ts --port 0 [--host 127.0.0.1] [--api-key KEY]
 * Prints `fake-openai listening on http://HOST:PORT/v1` (Chat Completions at
 * /v1/chat/completions, the Responses API at /v1/responses). With no queue in this
 * mode, each request picks its script by model name (`bench-burst-N`,
 * `bench-paced-N-D`) or the `x-fake-script` header; otherwise a short text reply.
 */
import { parseArgs } from "node:util";
import { startFakeOpenAI } from "./server.js";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    "api-key": { type: "string" },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`fake-openai: --port must be an integer 0..65535, got ${values.port}`);
  process.exit(2);
}

const fake = await startFakeOpenAI({ port, host: values.host, apiKey: values["api-key"] });
console.log(`fake-openai listening on ${fake.url}`);

const stop = () => {
  void fake.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
