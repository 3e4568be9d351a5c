/**
 * The README's list of requests and notifications, derived from the
 * inventory so that it cannot fall behind it: one line per method, the first
 * sentence of its description, experimental ones marked.
 */
import type { GeneratedBlock } from "./blocks.js";
import { protocolInventory, type ClientInventory } from "./client-types.js";
import { firstSentence } from "./jsdoc.js";

export function readmeMethodsBlock(inventory: ClientInventory = protocolInventory): GeneratedBlock {
  const lines = ["**Requests** (client → server):", ""];
  for (const [method, entry] of Object.entries(inventory.requests)) {
    const experimental = entry.experimental ? ` *Experimental* (needs \`capabilities.experimentalApi\`): ${entry.experimental}` : "";
    lines.push(`- \`${method}\` — ${firstSentence(entry.description)}${experimental}`);
  }
  lines.push("", "**Notifications** (server → client):", "");
  for (const [method, entry] of Object.entries(inventory.notifications)) {
    lines.push(`- \`${method}\` — ${firstSentence(entry.description)}`);
  }
  return { path: "README.md", name: "methods", content: `${lines.join("\n")}\n` };
}
