/**
 * An MCP tool result as text for the model: text content joined, structured
 * content as JSON, anything else (images, audio, resources) summarised in
 * one line — the model API takes only text from a tool, and a base64 image
 * pasted as text would only burn context.
 */
import { isDeepStrictEqual } from "node:util";
import { OutputBudget } from "../tools/output-budget.js";
import type { McpCallResult } from "./mcp-sdk.js";

type ContentBlock = { type: string; [key: string]: unknown };

export function mcpResultText(result: McpCallResult, maxBytes: number): string {
  const budget = new OutputBudget(maxBytes);
  const parts: string[] = [];
  const content = Array.isArray(result.content) ? (result.content as ContentBlock[]) : [];
  for (const block of content) parts.push(blockText(block));
  const structured = result.structuredContent;
  // Servers often repeat structured content as JSON text for older clients; once is enough.
  if (structured !== undefined && !content.some((block) => block.type === "text" && sameJson(block.text, structured))) {
    parts.push(JSON.stringify(structured, null, 2));
  }
  // A legacy (pre-2025) result carries `toolResult` instead of content.
  if (parts.length === 0 && "toolResult" in result && result.toolResult !== undefined) parts.push(JSON.stringify(result.toolResult));
  budget.append(parts.join("\n"));
  return budget.toString();
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? block.text : "";
    case "image":
    case "audio":
      return `[${block.type}: ${str(block.mimeType) ?? "unknown type"}, ${base64Bytes(block.data)} bytes, not shown]`;
    case "resource_link":
      return `[resource link: ${str(block.uri) ?? "?"}${block.name ? ` (${str(block.name)})` : ""}${block.mimeType ? `, ${str(block.mimeType)}` : ""}]`;
    case "resource": {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      const size = typeof resource.text === "string" ? `${resource.text.length} characters of text` : `${base64Bytes(resource.blob)} bytes`;
      return `[resource: ${str(resource.uri) ?? "?"}${resource.mimeType ? `, ${str(resource.mimeType)}` : ""}, ${size}, not shown]`;
    }
    default:
      return `[${String(block.type)} content, not shown]`;
  }
}

function sameJson(text: unknown, value: unknown): boolean {
  if (typeof text !== "string") return false;
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
