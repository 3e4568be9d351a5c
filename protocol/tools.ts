import { z } from "zod";

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
      .enum(["builtin", "custom", "web", "mcp"])
      .describe("Where the tool comes from: built in, a command from the configuration, the web tools, or an MCP server (named mcp__<server>__<tool>)."),
  })
  .describe("A tool the model may call.");

export const ToolsListParams = z.strictObject({}).describe("No parameters.");
export const ToolsListResult = z
  .object({ tools: z.array(ToolSpec).describe("Every tool offered to the model.") })
  .describe("Result of tools.list.");

export const ModelsListParams = z.strictObject({}).describe("No parameters.");
export const ModelsListResult = z
  .object({
    models: z
      .array(
        z
          .object({
            id: z.string().describe("Model id, usable as `model` in step or conversation.create."),
            ownedBy: z.string().optional().describe("Owner, as the endpoint reports it."),
          })
          .describe("A model the endpoint serves."),
      )
      .describe("Models from the endpoint's /models route."),
    defaultModel: z.string().nullable().describe("The server's default model (AGENTWIRE_MODEL or --model), or null."),
  })
  .describe("Result of models.list.");

export type ToolSpec = z.infer<typeof ToolSpec>;
