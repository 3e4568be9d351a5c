/** The module hooks record-module-loads.mjs registers (they run on Node's hooks thread). */
import { appendFileSync } from "node:fs";

let file;

export function initialize(data) {
  file = data.file;
}

export async function load(url, context, nextLoad) {
  // One short line per append: lines from several processes on one file do not interleave.
  if (url.startsWith("file:")) appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}
