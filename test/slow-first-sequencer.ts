/**
 * The order `npm test` starts its files in: the known-slow ones first, longest first, then the rest
 * as vitest orders them (by the durations of the last run when it has them, else larger files first).
 *
 * With two workers the suite ends when the later one does: a 20-second file started last leaves the
 * other core idle for most of those 20 seconds. vitest keeps last run's durations in
 * node_modules/.vite, which a fresh clone (CI) does not have, so this list says what it would.
 * A name here that no longer exists is ignored; a new slow file not named here only runs in
 * vitest's own order. Figures: seconds on a 2-core machine, from a whole run.
 */
import type { TestSpecification } from "vitest/node";
import { BaseSequencer } from "vitest/node";

const SLOW_FILES: Record<string, number> = {
  // 35-90 s in CI's runs (chromium); skipped where there is no browser.
  "test/clients/web-client.test.ts": 35,
  "test/docs/docs-blocks.test.ts": 21,
  "test/cluster/cluster-wiring.test.ts": 19,
  "test/package/package-install.test.ts": 16,
  "test/runtimes/claude-runtime.test.ts": 14,
  "test/tools/files/file-tools-race.test.ts": 14,
  "test/clients/python-client.test.ts": 14,
  "test/bundle/bundle-smoke.test.ts": 13,
  "test/cluster/cluster-instances.test.ts": 12,
  "test/cli/cli-commands.test.ts": 9,
  "test/transport/socket-thread.test.ts": 8,
  "test/sessions/memory-soak.test.ts": 7,
  "test/bundle/code-cache.test.ts": 7,
  "test/cluster/cluster-redis-pause.test.ts": 6,
  "test/store/index-journal.test.ts": 6,
  "test/mcp/mcp-lifecycle.test.ts": 5,
};

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rest = await super.sort(files);
    const root = this.ctx.config.root.replace(/\/$/, "");
    const weight = (spec: TestSpecification) => SLOW_FILES[spec.moduleId.slice(root.length + 1)] ?? 0;
    // Array.prototype.sort is stable: files of equal weight keep vitest's order.
    return rest.sort((a, b) => weight(b) - weight(a));
  }
}
