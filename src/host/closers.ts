// What a start has opened so far, so that a start that fails halfway (a port taken) closes it and
// the process can end.

/** What a start has opened so far, closed newest first when a later part cannot start. */
export class Closers {
  readonly #closers: (() => Promise<unknown> | undefined)[] = [];

  add(close: () => Promise<unknown> | undefined): void {
    this.#closers.unshift(close);
  }

  /** Starts a part and remembers how to close it; when it cannot start, closes what was opened and rethrows. */
  async open<T>(start: () => Promise<T>, close: (part: T) => Promise<unknown> | undefined): Promise<T> {
    let part: T;
    try {
      part = await start();
    } catch (err) {
      for (const closeOne of this.#closers) await closeOne()?.catch(() => {});
      throw err;
    }
    this.add(() => close(part));
    return part;
  }
}
