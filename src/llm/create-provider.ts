/**
 * The one way to get an LlmProvider for a model endpoint: pick the wire the
 * endpoint speaks (wires/wire-table.ts); retries, timeouts and error mapping
 * are the same for all (model-call.ts).
 */
import { ModelCallProvider, type ModelCallOptions } from "./model-call.js";
import type { LlmProvider } from "./provider.js";
import { WIRES, type WireOptions } from "./wires/wire-table.js";
import type { WireName } from "./wires/wire.js";

export type { WireName } from "./wires/wire.js";

/** Connection and retry options (see ModelCallOptions), plus what a wire reads (WireOptions). */
export interface WireProviderOptions extends ModelCallOptions, WireOptions {}

export function createWireProvider(wire: WireName, options: WireProviderOptions = {}): LlmProvider {
  const make = Object.hasOwn(WIRES, wire) ? WIRES[wire] : undefined;
  if (!make) throw new Error(`unknown wire ${JSON.stringify(wire)}: expected one of ${Object.keys(WIRES).map((n) => JSON.stringify(n)).join(", ")}`);
  return new ModelCallProvider(make(options), options);
}
