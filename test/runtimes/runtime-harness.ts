/**
 * What the agent-runtime tests check the same way of every runtime: the
 * pinned package version, an ordinary conversation running beside a waiting
 * runtime turn, interrupting a turn, and the refusals (a setting the runtime
 * cannot take, a runtime whose package is missing).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { AgentwireClient } from "../../clients/typescript/index.js";
import type { RuntimePackage } from "../../src/runtimes/runtime-package.js";
import type { FakeOpenAI } from "../fake-openai/server.js";
import { newConversation } from "../harness/agent-fixture.js";
import { REPO_ROOT } from "../harness/cli-process.js";
import { rpcError } from "../harness/rpc-errors.js";

/** .ci/install-runtimes.sh installs the version the runtime was written against. */
export function expectInstallPinned(pkg: RuntimePackage): void {
  expect(readFileSync(join(REPO_ROOT, ".ci", "install-runtimes.sh"), "utf8")).toContain(`"${pkg.name}@${pkg.version}"`);
}

/** An ordinary conversation on the same server runs a whole step through agentwire's loop (while a runtime turn waits). */
export async function expectOrdinaryStep(client: AgentwireClient, fake: FakeOpenAI): Promise<void> {
  fake.enqueue({ kind: "reply", text: ["ordinary answer"] });
  const ordinary = await newConversation(client, {}, "hi");
  const step = await client.step({ conversationId: ordinary.id });
  expect((await ordinary.events.waitForEnd(step.generationId, 10_000)).method).toBe("generation_complete");
  expect(fake.wires.at(-1)).toBe("chat");
}

/** interrupt stops a streaming turn within `withinMs`, keeping the partial text, and the runtime's session goes on afterwards. */
export async function expectInterruptKeepsPartial(client: AgentwireClient, fake: FakeOpenAI, model: string, workspace: string, withinMs: number): Promise<void> {
  fake.enqueue({ kind: "reply", text: ["Partial", " never sent"], hangAfter: 1 });
  const { id, events } = await newConversation(client, { model, workspace }, "talk slowly");
  const { generationId } = await client.step({ conversationId: id });
  await events.waitForMethod("generation_progress", 20_000);
  const started = Date.now();
  expect(await client.interrupt({ conversationId: id })).toEqual({ interrupted: true });
  expect(Date.now() - started).toBeLessThan(withinMs);
  expect((await events.waitForEnd(generationId, 5000)).method).toBe("interrupted");
  expect(events.of("interrupted")).toHaveLength(1);
  const records = (await client.conversation.get({ conversationId: id, includeRecords: true })).records!;
  expect(records.at(-1)).toMatchObject({ type: "message", role: "assistant", content: "Partial" });
  // The runtime dropped the hung request.
  expect(await fake.exchanges[0]!.ended).toBe("client_closed");

  fake.enqueue({ kind: "reply", text: ["Back."] });
  await client.message.append({ conversationId: id, role: "user", content: "go on" });
  const next = await client.step({ conversationId: id });
  expect((await events.waitForEnd(next.generationId, 20_000)).method).toBe("generation_complete");
}

/** A temperature is refused on `model`; `missingModel`'s runtime, whose package is not in `missingDir`, names the install command. No model request is made. */
export async function expectRefusals(
  client: AgentwireClient,
  fake: FakeOpenAI,
  at: { model: string; workspace: string; missingModel: string; missingDir: string; pkg: RuntimePackage },
): Promise<void> {
  const conversation = await client.conversation.create({ model: at.model, workspace: at.workspace, settings: { temperature: 0.2 } });
  await client.message.append({ conversationId: conversation.id, role: "user", content: "hi" });
  const temperature = await rpcError(client.step({ conversationId: conversation.id }));
  expect(temperature.code).toBe(-32012);
  expect(temperature.data).toEqual({ model: at.model, capability: "runtime" });
  expect(temperature.message).toContain("temperature");

  const missing = await client.conversation.create({ model: at.missingModel });
  await client.message.append({ conversationId: missing.id, role: "user", content: "hi" });
  const error = await rpcError(client.step({ conversationId: missing.id }));
  expect(error.code).toBe(-32012);
  expect(error.message).toContain(at.pkg.name);
  expect(error.message).toContain(`npm install --prefix ${at.missingDir} ${at.pkg.name}@${at.pkg.version}`);
  expect(fake.requests).toHaveLength(0);
}
