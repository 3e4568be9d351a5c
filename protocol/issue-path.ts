/**
 * The one notation for a field's place inside params or tool arguments:
 * dots between keys, brackets around array indexes — `settings.maxIterations`,
 * `arguments.edits[0].text`; "" for the value itself. Every INVALID_PARAMS
 * `data.issues[].path` and every tool-argument problem uses it.
 */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else text += text === "" ? String(key) : `.${String(key)}`;
  }
  return text;
}
