// An upstream's answer streamed into the client's response through undici's dispatch: what its
// stream() does, without what the gateway does not need of it on every call (an AsyncResource,
// four listeners on the response, and a destroy of the response once it has finished, with its
// ticks): one listener, on the response's close, which settles the call when the answer has been
// sent and aborts the upstream request when the client left before.
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';

/** What undici's stream() fails with when the client's response closed before the answer was sent (targets.ts reads its code). */
function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/**
 * Sends `options` through `dispatcher` and streams the answer into `res`, once `onHead` has
 * written the status line and headers (or thrown, which fails the call and aborts the request).
 * Settles when the answer is sent; fails with undici's error, with `signal`'s reason, or with
 * ERR_STREAM_PREMATURE_CLOSE when the client left first.
 */
export function forward(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: AbortSignal | null, res: ServerResponse, onHead: OnHead): Promise<void> {
  return new Promise((resolve, reject) => {
    try {
      dispatcher.dispatch(options, new Forward(res, onHead, signal, resolve, reject));
    } catch (err) {
      reject(err as Error);
    }
  });
}

/** Writes the answer's status line and headers to the client's response. */
type OnHead = (status: number, headers: Dispatcher.ResponseData['headers']) => void;

class Forward implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  readonly #onHead: OnHead;
  readonly #resolve: () => void;
  readonly #reject: (err: Error) => void;
  #controller: Dispatcher.DispatchController | undefined;
  /** Why the request must stop before undici gave it a controller (the client left, the body was refused). */
  #abortWith: Error | undefined;
  /** The answer's end was handed to the response: undici is done with the request. */
  #ended = false;
  #settled = false;

  constructor(res: ServerResponse, onHead: OnHead, signal: AbortSignal | null, resolve: () => void, reject: (err: Error) => void) {
    this.#res = res;
    this.#onHead = onHead;
    this.#resolve = resolve;
    this.#reject = reject;
    if (res.closed) this.#abortWith = prematureClose();
    else res.once('close', this.#onClose);
    if (signal !== null) {
      if (signal.aborted) this.#abortWith = signal.reason as Error;
      else signal.addEventListener('abort', () => this.#abort(signal.reason as Error), { once: true });
    }
  }

  readonly #onClose = (): void => {
    if (this.#res.writableFinished) this.#settle(undefined);
    else if (this.#ended) this.#settle(prematureClose());
    // After the request's own close (Node emits it a tick after the response's): a body cut off
    // mid-way aborts first, with its reason (request_aborted), through the signal.
    else setImmediate(() => this.#abort(prematureClose()));
  };

  /** Stops the request; undici then calls onResponseError with `reason` (or the reason of an earlier abort). */
  #abort(reason: Error): void {
    if (this.#controller === undefined) this.#abortWith ??= reason;
    else if (!this.#controller.aborted) this.#controller.abort(reason);
  }

  #settle(err: Error | undefined): void {
    if (this.#settled) return;
    this.#settled = true;
    if (err === undefined) this.#resolve();
    else this.#reject(err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortWith !== undefined) controller.abort(this.#abortWith);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Dispatcher.ResponseData['headers']): void {
    // 1xx answers are the upstream's and the connection's business, not the client's.
    if (statusCode < 200) return;
    try {
      this.#onHead(statusCode, headers);
    } catch (err) {
      controller.abort(err as Error);
      return;
    }
    if (this.#res.writableNeedDrain) this.#pause(controller);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#res.write(chunk)) this.#pause(controller);
  }

  #pause(controller: Dispatcher.DispatchController): void {
    controller.pause();
    this.#res.once('drain', () => controller.resume());
  }

  onResponseEnd(): void {
    // The call settles on the response's close, once the answer is out.
    this.#ended = true;
    this.#res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    // Headers sent: the client can only learn of the failure from the connection ending early.
    if (this.#res.headersSent && !this.#res.destroyed) this.#res.destroy();
    this.#settle(err);
  }
}
