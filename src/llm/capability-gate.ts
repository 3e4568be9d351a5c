/**
 * What a model declares it can do, and the check that refuses a request it
 * cannot take before anything is sent. One check, asked twice: by `step`
 * (answered with a JSON-RPC CAPABILITY_UNSUPPORTED error, nothing started)
 * and again before every model call (a conversation.update, a new MCP tool
 * or an appended image may change a running step's request; the generation
 * then ends with an `error` event). Why both: a step is refused cheaply
 * and clearly up front, and nothing a running step picks up can slip past.
 */
import type * as z from "zod";
import type { ModelCapabilitiesConfig, ReasoningEffort } from "../../protocol/config-providers.js";
import { parseConfigPart } from "../config/config-check.js";
import type { ModelPricing } from "../../protocol/usage.js";
import type { ModelControls } from "./provider.js";

/** A declared model's capabilities with the defaults applied (protocol/config-providers.ts documents them). */
export interface ModelCapabilities {
  tools: boolean;
  imageInput: boolean;
  /** The efforts it takes; empty when it does not reason. */
  reasoning: ReasoningEffort[];
  temperature: boolean;
  /** The endpoint wants earlier thinking back as `reasoning_content` (see the config key). */
  reasoningContent: boolean;
  maxOutputTokens?: number;
  contextWindow?: number;
  /** Its declared price (what costs are computed from); absent: costs are null. */
  pricing?: ModelPricing;
}

const ALL_EFFORTS: ReasoningEffort[] = ["low", "medium", "high"];

export function capabilitiesFrom(written: ModelCapabilitiesConfig): ModelCapabilities {
  // Parsing applies the schema's defaults (a declaration written by hand may leave them out).
  // As data (config-check.ts): the capabilities' zod schema is not built for a valid declaration.
  const declared = parseConfigPart<z.output<typeof ModelCapabilitiesConfig>>("providers.*.models.*", written);
  const reasoning = declared.reasoning === true ? ALL_EFFORTS : Array.isArray(declared.reasoning) ? [...declared.reasoning] : [];
  return {
    tools: declared.tools,
    imageInput: declared.imageInput,
    reasoning,
    temperature: declared.temperature,
    reasoningContent: declared.reasoningContent,
    ...(declared.maxOutputTokens !== undefined ? { maxOutputTokens: declared.maxOutputTokens } : {}),
    ...(declared.contextWindow !== undefined ? { contextWindow: declared.contextWindow } : {}),
    ...(declared.pricing !== undefined ? { pricing: declared.pricing } : {}),
  };
}

export type Capability = "imageInput" | "reasoning" | "temperature" | "tools" | "maxOutputTokens";

/** What one request would send, as far as capabilities care. */
export interface RequestNeeds extends ModelControls {
  /** Tools offered (after the conversation's policy). */
  toolCount: number;
  /** The context carries at least one image. */
  images: boolean;
}

export interface CapabilityProblem {
  capability: Capability;
  /** Says what was asked, what the model takes, and how to do without it. */
  message: string;
}

/**
 * The first thing `needs` asks that the model cannot do; undefined when it
 * can do all of it. `capabilities` null means the model is not declared: its
 * capabilities are unknown and nothing is refused (the endpoint has the last word).
 */
export function capabilityProblem(model: string, capabilities: ModelCapabilities | null, needs: RequestNeeds): CapabilityProblem | undefined {
  if (!capabilities) return undefined;
  if (needs.images && !capabilities.imageInput) {
    return {
      capability: "imageInput",
      message: `${model} does not take images (imageInput), and the conversation carries an image attachment; use a model that does`,
    };
  }
  const reasoning = needs.reasoning;
  if (reasoning !== undefined && reasoning !== "off" && !capabilities.reasoning.includes(reasoning)) {
    const takes = capabilities.reasoning.length ? `it takes ${capabilities.reasoning.join(", ")}` : "it does not reason";
    return {
      capability: "reasoning",
      message: `${model} does not take reasoning effort "${reasoning}" (${takes}); set reasoning to null or off, or one it takes`,
    };
  }
  if (needs.temperature !== undefined && !capabilities.temperature) {
    return { capability: "temperature", message: `${model} does not take a temperature; set temperature to null` };
  }
  if (needs.maxTokens !== undefined && capabilities.maxOutputTokens !== undefined && needs.maxTokens > capabilities.maxOutputTokens) {
    return {
      capability: "maxOutputTokens",
      message: `${model} writes at most ${capabilities.maxOutputTokens} tokens (maxOutputTokens), and maxTokens asks for ${needs.maxTokens}`,
    };
  }
  if (needs.toolCount > 0 && !capabilities.tools) {
    return {
      capability: "tools",
      message: `${model} does not take tools, and this conversation offers ${needs.toolCount}; deny them all with settings.toolPolicy {"*": "never"} to use it`,
    };
  }
  return undefined;
}
