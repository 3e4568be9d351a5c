/**
 * The OpenAI wires' URL and headers worked out without the SDK
 * (src/llm/wires/openai-headers.ts) must be the SDK's own, name for name,
 * value for value, in the same order; where they cannot be worked out
 * exactly, the answer is undefined and the SDK is asked. Each case is
 * compared with what the SDK builds for a client made with the same options
 * (openai-client.ts's sdkClientOptions).
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import OpenAI from "openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sdkClientOptions } from "../../src/llm/wires/openai-client.js";
import { sdkRequest } from "../../src/llm/wires/openai-direct.js";
import { sdkRequestWithoutSdk, type SdkRequestInputs } from "../../src/llm/wires/openai-headers.js";
import { REPO_ROOT } from "../harness/repo-root.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

/** URL and headers (as [name, value] pairs, in order) the SDK builds for a client made as the wires make theirs. */
async function fromSdk(inputs: SdkRequestInputs, path: string) {
  const client = new OpenAI(sdkClientOptions({ ...inputs, timeoutMs: 600_000 }));
  const { url, headers } = await sdkRequest(client, path);
  return { url: url.href, headers: Object.entries(headers) };
}

function withoutSdk(inputs: SdkRequestInputs, path: string) {
  const found = sdkRequestWithoutSdk(inputs, path);
  return found && { url: found.url.href, headers: Object.entries(found.headers) };
}

const base = { apiKey: "sk-test", baseURL: "http://127.0.0.1:1/v1" };

const exact: Record<string, { inputs: SdkRequestInputs; path?: string; env?: Record<string, string> }> = {
  "no provider headers": { inputs: base },
  "the default endpoint, the Responses path": { inputs: { apiKey: "none", baseURL: "https://api.openai.com/v1" }, path: "/responses" },
  "a base URL ending in a slash": { inputs: { ...base, baseURL: "http://h.invalid:8080/openai/v1/" } },
  "provider headers of their own": { inputs: { ...base, headers: { "X-Gateway": "g1", "OpenAI-Beta": "assistants=v2", "x-empty": "" } } },
  "provider headers replacing the SDK's (any case)": {
    inputs: {
      ...base,
      headers: { Accept: "text/event-stream", "user-agent": "mine/1", AUTHORIZATION: "Bearer other", "Content-Type": "application/json; charset=utf-8", "X-Stainless-Retry-Count": "7" },
    },
  },
  "one name twice in the provider's headers, in two cases": { inputs: { ...base, headers: { "X-Dup": "a", "x-dup": "b" } } },
  "an api-key header and an empty Authorization": { inputs: { ...base, headers: { Authorization: "", "api-key": "k" } } },
  "organization and project from the environment (trimmed), one replaced by a provider header": {
    inputs: { ...base, headers: { "OpenAI-Project": "proj-2" } },
    env: { OPENAI_ORG_ID: "  org-1 ", OPENAI_PROJECT_ID: "proj-1" },
  },
  "an empty OPENAI_ORG_ID and a blank OPENAI_CUSTOM_HEADERS (as unset)": { inputs: base, env: { OPENAI_ORG_ID: "", OPENAI_CUSTOM_HEADERS: "  " } },
};

describe("the SDK's request worked out without the SDK", () => {
  for (const [name, { inputs, path = "/chat/completions", env = {} }] of Object.entries(exact)) {
    it(`${name}: exactly the SDK's`, async () => {
      for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value);
      const ours = withoutSdk(inputs, path);
      expect(ours).toBeDefined();
      expect(ours).toEqual(await fromSdk(inputs, path));
    });
  }

  const askTheSdk: Record<string, { inputs: SdkRequestInputs; env?: Record<string, string> }> = {
    "a value with spaces around it (Headers trims it)": { inputs: { ...base, headers: { "X-Pad": " v " } } },
    "a value outside printable ASCII": { inputs: { ...base, headers: { "X-Name": "é" } } },
    "a name that is not a token (the SDK throws)": { inputs: { ...base, headers: { "Bad Name": "x" } } },
    "set-cookie (listed once per value)": { inputs: { ...base, headers: { "Set-Cookie": "a=b" } } },
    "no Authorization left (the SDK refuses to send)": { inputs: { ...base, headers: { Authorization: "" } } },
    "a key with a line break": { inputs: { ...base, apiKey: "sk\nx" } },
    "a base URL with a query": { inputs: { ...base, baseURL: "http://127.0.0.1:1/v1?api-version=1" } },
    "OPENAI_CUSTOM_HEADERS": { inputs: base, env: { OPENAI_CUSTOM_HEADERS: "X-A: 1" } },
  };
  for (const [name, { inputs, env = {} }] of Object.entries(askTheSdk)) {
    it(`${name}: left to the SDK`, () => {
      for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value);
      expect(sdkRequestWithoutSdk(inputs, "/chat/completions")).toBeUndefined();
    });
  }

  it("a platform or architecture outside its tables: left to the SDK", () => {
    expect(sdkRequestWithoutSdk(base, "/chat/completions", { platform: "aix" })).toBeUndefined();
    expect(sdkRequestWithoutSdk(base, "/chat/completions", { arch: "ia32" })).toBeUndefined();
  });

  it("names each platform and architecture of its tables as the SDK does", () => {
    const combos = [
      ...["linux", "darwin", "win32", "freebsd", "openbsd"].map((platform) => ({ platform, arch: "x64" })),
      ...["x64", "arm64", "arm"].map((arch) => ({ platform: "linux", arch })),
    ];
    // The SDK reads process.platform and process.arch once per module instance: a fresh instance per combination, in a plain node.
    const detect = pathToFileURL(join(REPO_ROOT, "node_modules", "openai", "internal", "detect-platform.mjs")).href;
    const script = `
      const combos = ${JSON.stringify(combos)};
      const out = [];
      for (const [i, { platform, arch }] of combos.entries()) {
        Object.defineProperty(process, "platform", { value: platform });
        Object.defineProperty(process, "arch", { value: arch });
        const { getPlatformHeaders } = await import(${JSON.stringify(detect)} + "?" + i);
        const h = getPlatformHeaders();
        out.push({ os: h["X-Stainless-OS"], arch: h["X-Stainless-Arch"] });
      }
      console.log(JSON.stringify(out));`;
    const sdk = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })) as { os: string; arch: string }[];
    const ours = combos.map(({ platform, arch }) => {
      const { headers } = sdkRequestWithoutSdk(base, "/chat/completions", { platform, arch })!;
      return { os: headers["x-stainless-os"], arch: headers["x-stainless-arch"] };
    });
    expect(ours).toEqual(sdk);
  });
});
