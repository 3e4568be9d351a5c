/**
 * Agent runtimes (agentwire.json `runtimes`): the second provider family.
 * A model provider (`providers`) is an endpoint agentwire's own loop calls;
 * a runtime is a whole agent (Codex) that runs its own loop and its own
 * tools, which agentwire drives and whose events it carries over the same
 * protocol. Its models are addressed like a provider's, `<name>/<model>`
 * (`codex/gpt-5-codex`), so a name may not be both a provider and a runtime.
 * src/runtimes/ implements them; docs/providers.md ("Agent runtimes") says
 * what maps and what does not.
 */
import * as z from "zod";
import type {} from "./config-meta.js";
import { ProviderName } from "./config-providers.js";

/** The runtimes agentwire knows how to drive (src/runtimes/runtime-table.ts implements each). */
export const RuntimeKind = z
  .enum(["codex", "claude"])
  .describe("Which agent runtime: codex (OpenAI's Codex agent, driven through `codex app-server` over stdio); claude (Claude Code, driven through @anthropic-ai/claude-agent-sdk).");
export type RuntimeKind = z.infer<typeof RuntimeKind>;

export const RuntimeDefinition = z
  .strictObject({
    runtime: RuntimeKind,
    packageDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A directory whose node_modules holds the runtime's package (e.g. what `npm install --prefix DIR @openai/codex` filled). Default: AGENTWIRE_RUNTIMES_DIR, else $XDG_CACHE_HOME/agentwire/runtimes (~/.cache/agentwire/runtimes), then wherever agentwire itself resolves packages from.",
      )
      .meta({ defaultText: "the runtimes cache" }),
    home: z
      .string()
      .min(1)
      .optional()
      .describe("The runtime's own home directory (Codex: CODEX_HOME, where its config.toml, auth and session rollouts live; Claude: CLAUDE_CONFIG_DIR, where its settings, login and transcripts live).")
      .meta({ defaultText: "the runtime's default (~/.codex, ~/.claude)" }),
    baseUrl: z
      .string()
      .url()
      .optional()
      .describe(
        "A model endpoint for the runtime to call instead of its default (Codex: a model provider named `agentwire` with this base_url, set on its command line; Claude: ANTHROPIC_BASE_URL, an endpoint speaking the Anthropic Messages API). Leave it out to use the runtime's own configuration and login.",
      ),
    wireApi: z.enum(["responses", "chat"]).default("responses").describe("With baseUrl: the API that endpoint speaks (Codex's wire_api; Claude speaks the Anthropic Messages API only)."),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional()
      .describe("With baseUrl: the environment variable holding that endpoint's key; passed to the runtime's process (Claude: as ANTHROPIC_API_KEY), and no other secret is."),
    approvalPolicy: z
      .enum(["untrusted", "on-request", "never"])
      .default("untrusted")
      .describe(
        "When the runtime asks before running a command or changing a file; each question is a tool_pending answered by tool.confirm. untrusted: everything but commands it knows to be read-only; on-request: when the model asks to leave the sandbox; never: nothing (every call is a read-only mirror). Claude: untrusted and on-request are its permission mode `default` (it asks before Bash, Write, Edit and the like), never allows every call it asks about (each a read-only mirror).",
      ),
    sandbox: z
      .enum(["read-only", "workspace-write", "danger-full-access"])
      .default("workspace-write")
      .describe("The runtime's own sandbox for the commands it runs (Codex's sandbox mode; Claude has none of its own and ignores it)."),
  })
  .describe("One agent runtime. Its models are addressed as <name>/<model>; the model id goes to the runtime as is.");

export const RuntimesConfig = z
  .record(ProviderName, RuntimeDefinition)
  .describe("Agent runtimes by name (see docs/providers.md, \"Agent runtimes\"). Their packages are optional and installed apart: `npm run runtimes:install`, or the command a missing one's error names.");

export type RuntimeDefinition = z.input<typeof RuntimeDefinition>;
export type ParsedRuntimeDefinition = z.output<typeof RuntimeDefinition>;
export type RuntimesConfig = z.input<typeof RuntimesConfig>;
