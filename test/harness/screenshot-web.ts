/**
 * Takes the pictures of the web client in docs/clients.md: a server with the fake
 * model, a short scripted conversation (the agent's plan, reasoning, a
 * confirmed tool call, a markdown answer with highlighted code, an edit waiting
 * for approval with the change it would make; the context meter and cost in the
 * top bar), photographed by Debian's Chromium at desktop
 * width (out.png) and phone width (out-phone.png). Nothing leaves the machine.
 *
 *   npx tsx test/harness/screenshot-web.ts [out.png]   (default clients/web/screenshot.png)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { buildWebClient } from "../../clients/web/build.js";
import { OpenAIProvider } from "../../src/llm/openai-provider.js";
import { startFakeOpenAI } from "../fake-openai/server.js";
import { startTestServer } from "./test-server.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const out = resolve(process.argv[2] ?? join(root, "clients/web/screenshot.png"));

const tmp = mkdtempSync(join(tmpdir(), "agentwire-screenshot-"));
const workspace = join(tmp, "project");
mkdirSync(join(workspace, "src"), { recursive: true });
writeFileSync(join(workspace, "README.md"), "# demo\n");
writeFileSync(join(workspace, "package.json"), "{}\n");
writeFileSync(join(workspace, "src/index.ts"), "export const greeting = \"hello\";\n");

await buildWebClient(join(tmp, "web"));
const fake = await startFakeOpenAI({ apiKey: "key" });
const server = await startTestServer(
  // A declared context window and price: the top bar shows the meter and the cost.
  {
    model: "demo-model",
    providers: {
      default: {
        baseUrl: "http://127.0.0.1:1/v1",
        models: { "demo-model": { contextWindow: 128_000, pricing: { inputPerMillion: 2, outputPerMillion: 8, currency: "USD" } } },
      },
    },
  },
  { webDir: join(tmp, "web"), provider: async () => new OpenAIProvider({ apiKey: "key", baseURL: fake.url }) },
);
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const client = await server.connectInMemory();
  await client.conversation.create({ title: "Refactor the store" });
  await client.conversation.create({ title: "Why is CI slow?" });
  const conversation = await client.conversation.create({ title: "What is in this project?", workspace });

  const plan = [
    { content: "List the project's files", status: "completed" },
    { content: "Make the greeting friendlier", status: "in_progress" },
    { content: "Run the tests", status: "pending" },
  ];
  fake.enqueue(
    {
      kind: "reply",
      reasoning: ["The user wants an overview. ", "Listing the files is the quickest start."],
      text: ["I'll list the files first."],
      toolCalls: [
        { id: "call_plan", name: "update_plan", args: JSON.stringify({ entries: plan }) },
        { id: "call_ls", name: "shell", args: JSON.stringify({ command: "ls -R" }) },
      ],
      usage: { prompt_tokens: 4_100, completion_tokens: 120, total_tokens: 4_220 },
    },
    {
      kind: "reply",
      text: [
        "A small **TypeScript** project:\n\n",
        "| file | what |\n|---|---|\n| `README.md` | the introduction |\n| `package.json` | the manifest |\n| `src/index.ts` | the entry point |\n\n",
        "The entry point exports one constant:\n\n```ts\nexport const greeting = \"hello\"; // shown on start\n```\n\nI'll make it friendlier.",
      ],
      toolCalls: [
        { id: "call_edit", name: "edit_file", args: JSON.stringify({ path: "src/index.ts", old_string: "\"hello\"", new_string: "\"hello, world\"" }) },
      ],
      usage: { prompt_tokens: 4_400, completion_tokens: 210, total_tokens: 4_610 },
    },
  );

  // Reduced motion: the list must not be caught sliding away when the viewport narrows.
  const context = await browser.newContext({ viewport: { width: 1200, height: 1040 }, deviceScaleFactor: 1, reducedMotion: "reduce" });
  const page = await context.newPage();
  const base = server.url.replace(/^ws:/, "http:").replace(/\/$/, "");
  await page.goto(`${base}/#${conversation.id}`);
  await page.waitForSelector("#conversations li.active");
  await page.fill("#input", "What is in this project?");
  await page.click("#send");
  await page.locator('[data-tool-call-id="call_ls"]').getByRole("button", { name: "Confirm" }).click();
  // The edit waits for approval: its card shows the change it would make.
  await page.waitForSelector('[data-tool-call-id="call_edit"] .diff-add');
  await page.waitForSelector(".plan-entry");
  await page.locator(".message.assistant details").first().evaluate((d) => ((d as HTMLDetailsElement).open = true));
  await page.locator('[data-tool-call-id="call_edit"]').evaluate((node) => node.scrollIntoView({ block: "end" }));
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator('[data-tool-call-id="call_edit"]').evaluate((node) => node.scrollIntoView({ block: "end" }));
  const phone = out.replace(/(\.png)?$/, "-phone.png");
  await page.screenshot({ path: phone });
  console.log(`wrote ${phone}`);
  await client.interrupt({ conversationId: conversation.id });
} finally {
  await browser.close();
  await server.close();
  await fake.close();
  rmSync(tmp, { recursive: true, force: true });
}
