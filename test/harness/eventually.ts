/** Poll `probe` until it returns true (state the server reaches asynchronously, e.g. after a socket closes). */
export async function eventually(probe: () => Promise<boolean> | boolean, timeoutMs = 3000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
