/**
 * web_fetch reaches only public addresses unless tools.web.allowPrivateNetwork
 * opens more: loopback in every spelling (names, IPv6, IPv4-mapped, the
 * unspecified address, numeric forms), link-local metadata, and a redirect
 * from an allowed address to a refused one are refused before any request
 * reaches them; agentwire's own /metrics is out of reach; and a web_fetch
 * that can reach private addresses is no longer run unasked under
 * auto-read-only. Real servers on 127.0.0.1 and 127.0.0.2.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configuredTools } from "../../../src/tools/configured-tools.js";
import type { Tool, ToolResult } from "../../../src/tools/tool.js";
import { ToolConfigError } from "../../../src/tools/tool-config-error.js";
import { createWebFetchTool } from "../../../src/tools/web/web-fetch.js";
import { nonPublicKind } from "../../../src/tools/web/private-network.js";
import { newConversation, startAgentFixture } from "../../harness/agent-fixture.js";
import { startFakeWebServer, type FakeWebServer } from "../../harness/fake-web-server.js";

const SETTING = "tools.web.allowPrivateNetwork";
const DATA = '{"secret": "local service"}';

let web: FakeWebServer;
/** A second local service, on another loopback address. */
let other: FakeWebServer;
/** A service on every local address, IPv4 and IPv6: whatever spelling reaches the machine reaches it. */
let everywhere: FakeWebServer;
let port: number;
let everywherePort: number;

beforeAll(async () => {
  other = await startFakeWebServer(
    { "/data.json": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(DATA) },
    "127.0.0.2",
  );
  web = await startFakeWebServer({
    "/data.json": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(DATA),
    "/to-other": (_req, res) => res.writeHead(302, { location: `${other.url}/data.json` }).end(),
    "/to-metadata": (_req, res) => res.writeHead(301, { location: "http://169.254.169.254/latest/meta-data/" }).end(),
  });
  port = Number(new URL(web.url).port);
  everywhere = await startFakeWebServer({ "/data.json": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(DATA) }, "::");
  everywherePort = Number(new URL(everywhere.url).port);
});
afterAll(async () => {
  await web?.close();
  await other?.close();
  await everywhere?.close();
});

async function run(tool: Tool, url: string) {
  const result: ToolResult = await tool.run(
    { url },
    { cwd: process.cwd(), conversationId: "c_test", signal: new AbortController().signal, timeoutMs: 10_000, onOutput: () => {} },
  );
  return result;
}

describe("refused by default", () => {
  // A short limit: code that tried to connect to 169.254.169.254 would wait for it, not refuse.
  const fetchTool = createWebFetchTool({ timeoutMs: 2000 });

  it("loopback in every spelling, the unspecified address and cloud metadata, without a request reaching them", async () => {
    const cases: [url: string, refusal: RegExp][] = [
      [`http://127.0.0.1:${everywherePort}/data.json`, /^Refused: 127\.0\.0\.1 is a loopback address\./],
      [`http://localhost:${everywherePort}/data.json`, /^Refused: localhost resolves to .*127\.0\.0\.1/],
      [`http://[::1]:${everywherePort}/data.json`, /^Refused: ::1 is a loopback address\./],
      [`http://[::ffff:127.0.0.1]:${everywherePort}/data.json`, /^Refused: ::ffff:7f00:1 is a loopback address\./],
      [`http://0.0.0.0:${everywherePort}/data.json`, /^Refused: 0\.0\.0\.0 is an unspecified address\./],
      [`http://[::]:${everywherePort}/data.json`, /^Refused: :: is an unspecified address\./],
      [`http://2130706433:${everywherePort}/data.json`, /^Refused: 127\.0\.0\.1 is a loopback address\./],
      [`http://0x7f.1:${everywherePort}/data.json`, /^Refused: 127\.0\.0\.1 is a loopback address\./],
      [`http://0177.0.0.1:${everywherePort}/data.json`, /^Refused: 127\.0\.0\.1 is a loopback address\./],
      ["http://169.254.169.254/latest/meta-data/", /^Refused: 169\.254\.169\.254 is a link-local address\./],
      ["http://[fd00::1]/", /^Refused: fd00::1 is a private address\./],
      ["http://10.1.2.3/", /^Refused: 10\.1\.2\.3 is a private address\./],
    ];
    for (const [url, refusal] of cases) {
      const started = Date.now();
      const result = await run(fetchTool, url);
      expect(result.success, url).toBe(false);
      expect(result.output, url).toMatch(refusal);
      expect(result.output, url).toContain(SETTING);
      expect(Date.now() - started, url).toBeLessThan(1500);
    }
    expect(everywhere.requests).toEqual([]);
  });

  it("names the host, the address and the setting, with an entry that would allow it", async () => {
    const result = await run(fetchTool, `http://127.0.0.1:${port}/data.json`);
    expect(result.output).toBe(
      "Refused: 127.0.0.1 is a loopback address. web_fetch does not connect to loopback, private, link-local or other non-public addresses " +
        `unless the server's setting ${SETTING} allows it (true, or a list of addresses, ranges and host names such as ["127.0.0.1:${port}"]).`,
    );
  });

  it("a redirect from an allowed address to a refused one is refused at the hop, before connecting", async () => {
    // Only 127.0.0.1 is allowed: 127.0.0.2 (where a server does listen) and the metadata address are not.
    const onlyOne = createWebFetchTool({ timeoutMs: 2000, allowPrivateNetwork: ["127.0.0.1"] });
    const toOther = await run(onlyOne, `${web.url}/to-other`);
    expect(toOther).toEqual({
      success: false,
      output:
        `${web.url}/to-other → HTTP 302 → ${other.url}/data.json\n` +
        `Refused: 127.0.0.2 is a loopback address. web_fetch does not connect to loopback, private, link-local or other non-public addresses ` +
        `unless the server's setting ${SETTING} allows it (true, or a list of addresses, ranges and host names such as ["127.0.0.2:${new URL(other.url).port}"]).`,
    });
    expect(other.requests).toEqual([]);
    const toMetadata = await run(onlyOne, `${web.url}/to-metadata`);
    expect(toMetadata.output).toMatch(/\nRefused: 169\.254\.169\.254 is a link-local address\./);
    // The allowed address itself is reached (the redirects were served).
    expect(web.requests.map((r) => r.path)).toEqual(["/to-other", "/to-metadata"]);
  });
});

describe("allowPrivateNetwork opens what it names", () => {
  it("true opens every address: each spelling refused above reaches the service, the redirect to 127.0.0.2 too", async () => {
    const all = createWebFetchTool({ timeoutMs: 2000, allowPrivateNetwork: true });
    for (const host of ["127.0.0.1", "localhost", "[::1]", "[::ffff:127.0.0.1]", "0.0.0.0", "[::]", "0x7f.1"]) {
      const result = await run(all, `http://${host}:${everywherePort}/data.json`);
      expect(result, host).toMatchObject({ success: true });
      expect(result.output, host).toContain(DATA);
    }
    const redirected = await run(all, `http://127.0.0.1:${port}/to-other`);
    expect(redirected).toMatchObject({ success: true });
    expect(redirected.output).toContain(DATA);
  });

  it("an address with a port opens that port only; a host name opens the name, not its address", async () => {
    const onePort = createWebFetchTool({ timeoutMs: 2000, allowPrivateNetwork: [`127.0.0.1:${port}`] });
    expect((await run(onePort, `http://127.0.0.1:${port}/data.json`)).output).toContain(DATA);
    expect((await run(onePort, `http://127.0.0.1:${port + 1}/data.json`)).output).toMatch(/^Refused: 127\.0\.0\.1 is a loopback address\./);

    const byName = createWebFetchTool({ timeoutMs: 2000, allowPrivateNetwork: ["localhost"] });
    expect((await run(byName, `http://localhost:${port}/data.json`)).output).toContain(DATA);
    expect((await run(byName, `http://127.0.0.1:${port}/data.json`)).output).toMatch(/^Refused: 127\.0\.0\.1 is a loopback address\./);

    const range = createWebFetchTool({ timeoutMs: 2000, allowPrivateNetwork: ["127.0.0.0/30"] });
    expect((await run(range, `${other.url}/data.json`)).output).toContain(DATA);
    expect((await run(range, `http://[::1]:${port}/data.json`)).output).toMatch(/^Refused: ::1 is a loopback address\./);
  });

  it("an entry that is not an address, a range or a host name stops the start, naming it", () => {
    const startError = (allowPrivateNetwork: string[]) => {
      try {
        configuredTools({ custom: [], web: { fetch: { enabled: true }, allowPrivateNetwork }, envAllow: [] });
      } catch (error) {
        expect(error).toBeInstanceOf(ToolConfigError);
        return (error as Error).message;
      }
      throw new Error("expected a ToolConfigError");
    };
    expect(startError(["127.0.0.1", "10.0.0.0/33"])).toBe(`${SETTING}[1]: "10.0.0.0/33" is not a CIDR range: the prefix length must be 0 to 32`);
    expect(startError(["wiki/8"])).toBe(`${SETTING}[0]: "wiki/8" is not a CIDR range: the part before / is not an IP address`);
    expect(startError(["localhost:99999"])).toBe(`${SETTING}[0]: "localhost:99999" has a port outside 1 to 65535`);
    expect(startError(["http://x"])).toBe(`${SETTING}[0]: "http://x" is not a CIDR range: the part before / is not an IP address`);
    expect(startError(["a b"])).toBe(`${SETTING}[0]: "a b" is not an address, a CIDR range or a host name (with an optional :PORT)`);
  });
});

describe("address classes", () => {
  it("knows loopback, private, link-local, CGNAT, multicast, reserved and embedded IPv4; public stays public", () => {
    const kinds = Object.fromEntries(
      [
        "127.255.0.1", "10.9.8.7", "172.16.0.1", "172.31.255.255", "172.32.0.1", "192.168.1.1", "100.64.0.1", "100.128.0.1",
        "169.254.169.254", "224.0.0.1", "255.255.255.255", "0.1.2.3", "8.8.8.8", "1.1.1.1",
        "::1", "::", "fd12:3456::1", "fe80::1", "ff02::1", "::ffff:10.0.0.1", "::ffff:8.8.8.8", "::7f00:1",
        "64:ff9b::a00:1", "64:ff9b::808:808", "2002:7f00:1::", "2001:db8::1", "2606:4700:4700::1111",
      ].map((address) => [address, nonPublicKind(address)]),
    );
    expect(kinds).toEqual({
      "127.255.0.1": "loopback",
      "10.9.8.7": "private",
      "172.16.0.1": "private",
      "172.31.255.255": "private",
      "172.32.0.1": null,
      "192.168.1.1": "private",
      "100.64.0.1": "shared (carrier-grade NAT)",
      "100.128.0.1": null,
      "169.254.169.254": "link-local",
      "224.0.0.1": "multicast",
      "255.255.255.255": "reserved",
      "0.1.2.3": "unspecified",
      "8.8.8.8": null,
      "1.1.1.1": null,
      "::1": "loopback",
      "::": "unspecified",
      "fd12:3456::1": "private",
      "fe80::1": "link-local",
      "ff02::1": "multicast",
      "::ffff:10.0.0.1": "private",
      "::ffff:8.8.8.8": null,
      "::7f00:1": "reserved",
      "64:ff9b::a00:1": "private",
      "64:ff9b::808:808": null,
      "2002:7f00:1::": "loopback",
      "2001:db8::1": "documentation",
      "2606:4700:4700::1111": null,
    });
  });
});

describe("through the server", () => {
  const metricsCall = (url: string, id = "call_m") => ({ kind: "reply" as const, toolCalls: [{ id, name: "web_fetch", args: JSON.stringify({ url }) }] });

  it("agentwire's own /metrics (no token) is out of reach of a web_fetch run unasked under auto-read-only", async () => {
    const fx = await startAgentFixture({ config: { tools: { web: { fetch: { enabled: true } } } } });
    try {
      const metrics = `http://${new URL(fx.server.url).host}/metrics`;
      // It is there, without a token, for anyone on the machine to read.
      const direct = await fetch(metrics);
      expect(direct.status).toBe(200);
      expect(await direct.text()).toContain("agentwire_");

      const viaName = metrics.replace("127.0.0.1", "localhost");
      fx.fake.enqueue(metricsCall(metrics, "call_ip"), metricsCall(viaName, "call_name"), { kind: "reply", text: ["done"] });
      const { id, events } = await newConversation(fx.client, { settings: { approval: "auto-read-only" } });
      const { generationId } = await fx.client.step({ conversationId: id });
      expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
      // Run without asking (read-only while it cannot reach local services) — and refused.
      expect(events.of("tool_pending").map((p) => [p.autoConfirmed, p.autoReason])).toEqual([
        [true, "policy"],
        [true, "policy"],
      ]);
      const results = fx.fake.requests.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      expect(results).toHaveLength(2);
      expect(results[0]).toMatch(/^Refused: 127\.0\.0\.1 is a loopback address\..*tools\.web\.allowPrivateNetwork/);
      expect(results[1]).toMatch(/^Refused: localhost resolves to .*127\.0\.0\.1.*tools\.web\.allowPrivateNetwork/);
      for (const text of results) expect(text).not.toContain("agentwire_");
    } finally {
      await fx.close();
    }
  });

  it("with allowPrivateNetwork set, web_fetch is not read-only: auto-read-only asks before it runs", async () => {
    const fx = await startAgentFixture({ config: { tools: { web: { fetch: { enabled: true }, allowPrivateNetwork: ["127.0.0.1"] } } } });
    try {
      const { tools } = await fx.client.tools.list();
      expect(tools.find((t) => t.name === "web_fetch")!.annotations).toMatchObject({ readOnlyHint: false });
      const metrics = `http://${new URL(fx.server.url).host}/metrics`;
      fx.fake.enqueue(metricsCall(metrics), { kind: "reply", text: ["done"] });
      const { id, events } = await newConversation(fx.client, { settings: { approval: "auto-read-only" } });
      const { generationId } = await fx.client.step({ conversationId: id });
      await events.waitForMethod("tool_pending");
      expect(events.of("tool_pending")[0]).toMatchObject({ autoConfirmed: false });
      expect((await fx.client.conversation.get({ conversationId: id })).state.pendingTools.map((p) => p.toolCallId)).toEqual(["call_m"]);
      // The user says yes: the allowed address is then reached.
      await fx.client.tool.confirm({ conversationId: id, toolCallId: "call_m", action: "confirm" });
      expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
      expect(String(fx.fake.requests[1]!.messages.at(-1)!.content)).toContain("agentwire_");
    } finally {
      await fx.close();
    }
  });
});
