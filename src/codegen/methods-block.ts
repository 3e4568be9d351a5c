/**
 * The list of requests and notifications in docs/clients.md, one line per
 * method (the first sentence of its description, experimental ones marked),
 * derived from the inventory so that it cannot fall behind it. The full
 * reference is docs/reference/protocol.md.
 */
import type { GeneratedBlock } from "./blocks.js";
import { protocolInventory, type ClientInventory } from "./client-types.js";
import { firstSentence } from "./jsdoc.js";
import { Slugger } from "./markdown.js";

export const METHODS_BLOCK_PATH = "docs/clients.md";

export function methodsBlock(inventory: ClientInventory = protocolInventory): GeneratedBlock {
  const lines = ["**Requests** (client → server):", ""];
  for (const [method, entry] of Object.entries(inventory.requests)) {
    const experimental = entry.experimental ? ` *Experimental* (needs \`capabilities.experimentalApi\`): ${entry.experimental}` : "";
    lines.push(`- [\`${method}\`](reference/protocol.md#${anchor(method)}) — ${firstSentence(entry.description)}${experimental}`);
  }
  lines.push("", "**Notifications** (server → client):", "");
  for (const [method, entry] of Object.entries(inventory.notifications)) {
    lines.push(`- [\`${method}\`](reference/protocol.md#${anchor(method)}) — ${firstSentence(entry.description)}`);
  }
  return { path: METHODS_BLOCK_PATH, name: "methods", content: `${lines.join("\n")}\n` };
}

/** The anchor of the method's heading (`### \`conversation.create\``) on the reference page; method names are unique there. */
const anchor = (method: string) => new Slugger().slug(method);
