/**
 * The runtime family on its own, without a runtime process: how
 * `<runtime>/<model>` resolves beside the providers, which configurations
 * are refused, and what a missing runtime package says (the Codex runtime
 * itself runs in codex-runtime.test.ts).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AgentwireConfigFile } from "../../protocol/config.js";
import { ProviderConfigError, ProviderRegistry } from "../../src/llm/provider-registry.js";
import { CODEX_PACKAGE } from "../../src/runtimes/codex-runtime.js";
import { findRuntimePackage, installCommand, runtimesCacheDir } from "../../src/runtimes/runtime-package.js";
import { RuntimeUnavailableError } from "../../src/runtimes/runtime.js";
import { RuntimeTable } from "../../src/runtimes/runtime-table.js";

const unused = () => Promise.reject(new Error("no provider is made here"));

describe("runtime routes", () => {
  it("sends <runtime>/<model> to the runtime, whole model id after the first slash, and the rest as before", () => {
    const registry = new ProviderRegistry({
      providers: { local: { baseUrl: "http://127.0.0.1:9/v1" } },
      envEndpoint: {},
      factory: unused,
      runtimes: ["codex"],
    });
    expect(registry.resolve("codex/gpt-5-codex")).toEqual({ provider: "codex", modelId: "gpt-5-codex", qualified: "codex/gpt-5-codex", capabilities: null, runtime: true });
    expect(registry.resolve("codex/org/model").modelId).toBe("org/model");
    expect(registry.resolve("local/m").runtime).toBeUndefined();
    expect(() => registry.resolve("codex/")).toThrow('"codex/" names runtime "codex" but no model');
  });

  it("refuses a name that is both a provider and a runtime", () => {
    expect(
      () => new ProviderRegistry({ providers: { codex: { baseUrl: "http://127.0.0.1:9/v1" } }, envEndpoint: {}, factory: unused, runtimes: ["codex"] }),
    ).toThrow(new ProviderConfigError('runtimes.codex: "codex" is also a provider; a model prefix must name one or the other'));
  });

  it("parses the runtimes section with its defaults, and refuses an unknown runtime or key", () => {
    const parsed = AgentwireConfigFile.parse({ runtimes: { codex: { runtime: "codex" } } });
    expect(parsed.runtimes.codex).toEqual({ runtime: "codex", wireApi: "responses", approvalPolicy: "untrusted", sandbox: "workspace-write" });
    expect(AgentwireConfigFile.safeParse({ runtimes: { gem: { runtime: "gemini" } } }).success).toBe(false);
    expect(AgentwireConfigFile.safeParse({ runtimes: { codex: { runtime: "codex", model: "x" } } }).success).toBe(false);
    expect(new RuntimeTable({ codex: { runtime: "codex" } }).get("codex").capabilities).toMatchObject({ approvals: true, interrupt: true, editApproval: false });
  });
});

describe("a missing runtime package", () => {
  it("is looked for in the runtimes cache: AGENTWIRE_RUNTIMES_DIR, else under XDG_CACHE_HOME", () => {
    expect(runtimesCacheDir({ AGENTWIRE_RUNTIMES_DIR: "/opt/rt" })).toBe("/opt/rt");
    expect(runtimesCacheDir({ XDG_CACHE_HOME: "/c" })).toBe("/c/agentwire/runtimes");
  });

  it("names the package and the exact command that installs it where it is looked for", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "agentwire-rt-")), "cache dir");
    let error: unknown;
    try {
      findRuntimePackage(CODEX_PACKAGE, undefined, { AGENTWIRE_RUNTIMES_DIR: dir });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    const message = (error as Error).message;
    expect(message).toContain(`the runtime needs the package @openai/codex, which is not installed (${dir} does not exist`);
    expect(message).toContain(`\`npm install --prefix '${dir}' @openai/codex@${CODEX_PACKAGE.version}\``);
    expect(installCommand(CODEX_PACKAGE, "/plain/dir")).toBe(`npm install --prefix /plain/dir @openai/codex@${CODEX_PACKAGE.version}`);
  });
});
