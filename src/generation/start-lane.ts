/**
 * Model calls start one per turn of the event loop.
 *
 * Starting a model call (the context, the system prompt, the request the
 * SDK builds, the HTTP request) is the costliest thing a turn does outside
 * its tokens, and it is all synchronous or microtasks. When many steps
 * arrive together (the fan-out bench: 300 conversations stepped at once)
 * their starts ran back to back in one turn of the loop, and every token
 * already on its way to a client waited behind all of them: the first
 * tokens of a stream had a p99 of tens of ms. Through this lane each start
 * takes one turn of the loop (setImmediate, after the I/O callbacks), so the
 * network reads that arrived meanwhile — tokens of streams already running —
 * are handled between two starts. A lone step waits one setImmediate hop.
 */
const waiting: (() => void)[] = [];
let scheduled = false;

/** Resolves when this model call may start: at once in the next check phase, or after the starts queued before it. */
export function modelCallTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(next);
    }
  });
}

function next(): void {
  // The resumed start runs in the microtasks right after this callback; the next one gets the next turn of the loop.
  waiting.shift()?.();
  if (waiting.length > 0) setImmediate(next);
  else scheduled = false;
}
