/**
 * Takes the pictures of the web client in docs/clients.md: a server with the fake
 * model, a short scripted conversation (reasoning, a confirmed tool call, a
 * markdown answer with highlighted code, a confirmed edit with its diff, a tool
 * call waiting for approval), photographed by Debian's Chromium at desktop
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
  { model: "demo-model" },
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

  fake.enqueue(
    {
      kind: "reply",
      reasoning: ["The user wants an overview. ", "Listing the files is the quickest start."],
      text: ["I'll list the files first."],
      toolCalls: [{ id: "call_ls", name: "shell", args: JSON.stringify({ command: "ls -R" }) }],
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
    },
    { kind: "reply", text: ["Done. Shall I run its tests?"] },
    { kind: "reply", text: ["Running them now."], toolCalls: [{ id: "call_test", name: "shell", args: JSON.stringify({ command: "npm test" }) }] },
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
  await page.locator('[data-tool-call-id="call_edit"]').getByRole("button", { name: "Confirm" }).click();
  await page.waitForSelector("text=Shall I run its tests?");
  await page.waitForFunction(() => document.body.dataset.generating === "false");
  await page.fill("#input", "Yes, please.");
  await page.click("#send");
  await page.waitForSelector('[data-tool-call-id="call_test"] >> text=Confirm');
  await page.locator(".message.assistant details").first().evaluate((d) => ((d as HTMLDetailsElement).open = true));
  await page.locator('[data-tool-call-id="call_edit"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator('[data-tool-call-id="call_edit"] .diff-file').scrollIntoViewIfNeeded();
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
