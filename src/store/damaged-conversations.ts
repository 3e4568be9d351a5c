import type { DamagedConversation } from "./conversation-store.js";

/**
 * The damaged conversations a store knows of, whoever found them (start-up
 * check, a load, a listing): each reported once to `onDamaged`, forgotten
 * when deleted or when it loads fine again.
 */
export class DamagedConversations {
  readonly #problems = new Map<string, string>();
  readonly #onDamaged: ((damaged: DamagedConversation) => void) | undefined;

  constructor(onDamaged?: (damaged: DamagedConversation) => void) {
    this.#onDamaged = onDamaged;
  }

  report(id: string, problem: string): void {
    const known = this.#problems.has(id);
    this.#problems.set(id, problem);
    if (known || !this.#onDamaged) return;
    try {
      this.#onDamaged({ id, problem });
    } catch {
      // A failing listener (a logger) must not turn a read into a failure.
    }
  }

  forget(id: string): void {
    this.#problems.delete(id);
  }

  list(): DamagedConversation[] {
    return [...this.#problems].map(([id, problem]) => ({ id, problem }));
  }
}
