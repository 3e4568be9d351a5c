/**
 * A few lines of spinner on stderr while nothing visible happens (waiting for
 * the first token, a tool running). Only on a terminal: piped stderr gets
 * nothing. `stop` erases it so the next text starts on a clean line.
 */
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export class Spinner {
  #timer: NodeJS.Timeout | undefined;
  #frame = 0;
  #label = "";

  constructor(private readonly out: NodeJS.WriteStream, private readonly enabled: boolean) {}

  get spinning(): boolean {
    return this.#timer !== undefined;
  }

  /** While this says so (a line is being typed at the prompt), the spinner stays off: its frames would erase the typed text. */
  #quiet: () => boolean = () => false;

  quietWhile(predicate: () => boolean): void {
    this.#quiet = predicate;
  }

  start(label: string): void {
    if (!this.enabled || this.#quiet()) return;
    this.#label = label;
    if (this.#timer) return;
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), 80);
    this.#timer.unref();
  }

  stop(): void {
    if (!this.#timer) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.out.write("\r\x1b[2K");
  }

  #draw(): void {
    if (this.#quiet()) return this.stop();
    this.out.write(`\r\x1b[2K${FRAMES[this.#frame++ % FRAMES.length]} ${this.#label}`);
  }
}
