/**
 * Summarizes a V8 .cpuprofile (from `node --cpu-prof`, e.g. written by
 * `npm run bench -- --only burst --profile DIR`): self time by function and
 * by where the code lives (a project file, a package, Node internals, GC).
 *
 *   node dist/bench/profile-summary.js FILE.cpuprofile [top=25] [skipMs=0]
 *
 * skipMs leaves out the first milliseconds of the profile (start-up, warm-up).
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives: "src/…", "pkg:name", "node:…", or a V8 pseudo-frame. */
export function placeOf(url: string, functionName: string): string {
  if (!url) return `(${functionName.replace(/[()]/g, "") || "native"})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `pkg:${pkg[1]}`;
  if (url.startsWith("node:")) return url;
  const own = /\/(src|bench|test|clients|protocol)\/(.+)$/.exec(url);
  if (own) return `${own[1]}/${own[2]}`;
  return url;
}

export function summarize(profile: Profile, top = 25, skipMs = 0): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < skipMs * 1000) continue;
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)") {
      idle += us;
      continue;
    }
    total += us;
    const place = placeOf(frame.url, frame.functionName);
    const key = `${frame.functionName || "(anonymous)"}  ${place}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
  }
  const table = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`)
      .join("\n");
  return [
    `busy ${(total / 1000).toFixed(1)} ms, idle ${(idle / 1000).toFixed(1)} ms, wall ${((profile.endTime - profile.startTime) / 1000).toFixed(1)} ms` +
      (skipMs ? ` (first ${skipMs} ms left out)` : ""),
    "",
    "self time by place:",
    table(byPlace),
    "",
    "self time by function:",
    table(byFunction),
  ].join("\n");
}

if (process.argv[1]?.endsWith("profile-summary.js") || process.argv[1]?.endsWith("profile-summary.ts")) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: node dist/bench/profile-summary.js FILE.cpuprofile [top]\n");
    process.exit(2);
  }
  process.stdout.write(`${summarize(JSON.parse(readFileSync(file, "utf8")) as Profile, Number(process.argv[3] ?? 25), Number(process.argv[4] ?? 0))}\n`);
}
