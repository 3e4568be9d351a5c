/**
 * The work that runs in the offload worker, by name. Each job is a pure
 * function of structured-cloneable data, in a module the worker loads on
 * first use (so a worker that only ever diffs never loads the HTML
 * converter). The main thread imports this file for its types only.
 */
export const OFFLOAD_JOBS = {
  /** HTML → Markdown and the page's title (src/tools/web/html-page.ts). */
  "html-page": () => import("../web/html-page.js").then((m) => m.convertHtmlPage),
  /** The lines of one text that a regular expression matches (src/tools/files/regex-lines.ts). */
  "line-matches": () => import("../files/regex-lines.js").then((m) => m.matchLines),
  /** The unified diff of a file's change (src/tools/files/file-diff.ts). */
  "file-diff": () => import("../files/file-diff.js").then((m) => m.computeFileChange),
} as const;

export type OffloadJobName = keyof typeof OFFLOAD_JOBS;
type JobFunction<N extends OffloadJobName> = Awaited<ReturnType<(typeof OFFLOAD_JOBS)[N]>>;
export type JobInput<N extends OffloadJobName> = Parameters<JobFunction<N>>[0];
export type JobOutput<N extends OffloadJobName> = Awaited<ReturnType<JobFunction<N>>>;
