import * as z from "zod";
import { ReasoningEffort, WireName } from "./config-providers.js";
import { ModelPricing } from "./model-pricing.js";
import { MAX_TOOL_LOCATIONS, MAX_TOOL_TITLE_CHARS } from "./limits/tools.js";
import { ToolKind } from "./tool-kind.js";
export * from "./limits/tools.js";
export * from "./tool-kind.js";


export const ToolTitle = z
  .string()
  .max(MAX_TOOL_TITLE_CHARS)
  .describe(`A short human title, one line of at most ${MAX_TOOL_TITLE_CHARS} characters.`);

export const ToolLocation = z
  .object({
    path: z
      .string()
      .describe("A file or directory the call touches, relative to the conversation's workspace, with / separators (\".\" for the workspace itself)."),
    line: z.number().int().min(1).optional().describe("The line it starts at (1-based), when the call names one."),
  })
  .describe("A place in the workspace a tool call reads or changes, for a client to show or open.");

/** What tool_pending and tool_executing carry to let a client render the call without knowing the tool. */
export const ToolCallDisplay = z
  .object({
    kind: ToolKind,
    title: ToolTitle.describe(
      `What the call does, for a human: "Edit src/app.ts", "Run npm test", "Fetch example.com". Derived from the arguments by built-in tools; the tool's title (or name) for others. At most ${MAX_TOOL_TITLE_CHARS} characters, one line.`,
    ),
    locations: z
      .array(ToolLocation)
      .max(MAX_TOOL_LOCATIONS)
      .describe(`The workspace files the call touches, from its arguments (at most ${MAX_TOOL_LOCATIONS}); empty when it names none.`),
  })
  .describe("How to show one tool call: its kind, a title and the files it touches.");

export const ToolSpec = z
  .object({
    name: z.string().describe("Tool name, as the model calls it."),
    description: z.string().describe("What the tool does, as told to the model."),
    parameters: z.record(z.string(), z.unknown()).describe("JSON Schema of the tool's arguments."),
    annotations: z
      .object({
        readOnlyHint: z.boolean().optional().describe("The tool does not change its environment (files, processes, remote state)."),
        destructiveHint: z.boolean().optional().describe("The tool may destroy or overwrite data."),
      })
      .describe("What the tool is known to do, as MCP's tool annotations; the approval policy reads them. Empty when unknown."),
    source: z
      .enum(["builtin", "custom", "web", "mcp", "client"])
      .describe("Where the tool comes from: built in, a command from the configuration, the web tools, an MCP server (named mcp__<server>__<tool>), or a client connection (tools.register; never in tools.list, which is server-wide)."),
    kind: ToolKind.describe(
      "What kind of thing the tool does: declared by built-in tools, by `kind` in a custom tool's configuration, or mapped from an MCP tool's annotations (readOnlyHint → read, destructiveHint → delete, otherwise not read-only → edit); other when unknown.",
    ),
    title: ToolTitle.describe("A short human name of the tool (\"Edit file\", \"Run command\"); an MCP tool's own title, else its name."),
  })
  .describe("A tool the model may call.");

export const ToolsListParams = z.strictObject({}).describe("No parameters.");
export const ToolsListResult = z
  .object({ tools: z.array(ToolSpec).describe("Every tool offered to the model.") })
  .describe("Result of tools.list.");

export const ModelsListParams = z.strictObject({}).describe("No parameters.");
const ModelCapabilities = z
  .object({
    tools: z.boolean().describe("Takes tools (function calling)."),
    imageInput: z.boolean().describe("Takes images in user messages."),
    reasoning: z.array(ReasoningEffort).describe("The reasoning efforts it takes; empty when it does not reason (\"off\" is always accepted)."),
    temperature: z.boolean().describe("Takes a sampling temperature."),
    reasoningContent: z.boolean().describe("Is sent its earlier thinking back as `reasoning_content` (DeepSeek-style thinking mode)."),
    maxOutputTokens: z.number().int().optional().describe("Most tokens it writes in one answer, when declared."),
    contextWindow: z.number().int().optional().describe("Its context window in tokens, when declared."),
    pricing: ModelPricing.optional().describe("What it costs per million tokens, when declared (usage_updated's costs come from it)."),
  })
  .describe("What a model can do, as its provider's configuration declares it (defaults applied). A step asking for more is refused with CAPABILITY_UNSUPPORTED.");

export const ModelsListResult = z
  .object({
    models: z
      .array(
        z
          .object({
            id: z.string().describe("provider/model: usable as `model` in step or conversation.create."),
            provider: z.string().describe("The provider serving it."),
            modelId: z.string().describe("The id its provider's endpoint knows it by."),
            ownedBy: z.string().optional().describe("Owner, as the endpoint reports it."),
            listed: z.boolean().describe("The endpoint's /models route reported it."),
            declared: z.boolean().describe("The configuration declares it (under providers.<name>.models)."),
            capabilities: ModelCapabilities.nullable().describe(
              "Its capabilities; null for a model the configuration does not declare: unknown, so nothing is refused for it (the endpoint has the last word).",
            ),
          })
          .describe("A model one of the providers serves."),
      )
      .describe("Every provider's models: what its endpoint lists, then declared models it did not list (also those of a provider that could not be asked)."),
    providers: z
      .array(
        z
          .object({
            name: z.string().describe("Provider name, the prefix of its models' ids."),
            wire: WireName.describe("The API it speaks: Chat Completions or the Responses API."),
            baseUrl: z.string().describe("Its endpoint (without any credentials in the URL)."),
            status: z
              .enum(["ok", "unreachable", "error"])
              .describe("ok: it listed its models. unreachable: no answer (connection refused, timed out). error: it answered with a failure (HTTP status, no /models route, bad key…)."),
            error: z.string().optional().describe("What went wrong, when status is not ok."),
            httpStatus: z.number().int().optional().describe("The endpoint's HTTP status, when it answered with one."),
          })
          .describe("One provider and whether its endpoint answered."),
      )
      .describe("Every configured provider, including those whose endpoint is down."),
    runtimes: z
      .array(
        z
          .object({
            name: z.string().describe("Runtime name (config `runtimes`), the prefix of its models: `<name>/<model>`, the model id going to the runtime as is."),
            runtime: z.string().describe("Which agent runtime: codex or claude."),
            status: z
              .enum(["ok", "missing"])
              .describe("ok: its package is installed where the server looks, so a step can start it. missing: it is not; a step on it is refused with CAPABILITY_UNSUPPORTED naming the install command."),
            error: z.string().optional().describe("With missing: what to install, and where."),
          })
          .describe("One agent runtime and whether it can start here. Its models are not listed: any model id it takes may follow its name."),
      )
      .describe("Every configured agent runtime (docs/providers.md, \"Agent runtimes\"); empty when none is."),
    defaultModel: z.string().nullable().describe("The server's default model (AGENTWIRE_MODEL or --model), or null."),
    defaultProvider: z.string().describe("The provider a model name without a provider prefix goes to."),
  })
  .describe("Result of models.list. Never fails for an endpoint's sake: a provider that cannot be asked is reported in `providers`.");

export type ToolSpec = z.infer<typeof ToolSpec>;
export type ToolLocation = z.infer<typeof ToolLocation>;
export type ToolCallDisplay = z.infer<typeof ToolCallDisplay>;
export type ModelsListResult = z.infer<typeof ModelsListResult>;
