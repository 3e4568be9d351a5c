/**
 * The readline's output, which can be muted: a secret answer is typed
 * without echo, as password prompts do. readline echoes each key itself (the
 * terminal is in raw mode), so muting what it writes hides the typing; the
 * terminal's size and resizes are passed through so line editing still
 * works.
 */
import { Writable } from "node:stream";

export class MutableOutput extends Writable {
  muted = false;

  constructor(private readonly target: NodeJS.WriteStream) {
    super();
    target.on("resize", () => this.emit("resize"));
  }

  get isTTY(): boolean {
    return this.target.isTTY === true;
  }

  get columns(): number {
    return this.target.columns;
  }

  get rows(): number {
    return this.target.rows;
  }

  override _write(chunk: Buffer | string, encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.muted) return done();
    this.target.write(chunk, encoding, done);
  }
}
