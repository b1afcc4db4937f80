// The one error of src/admin: a refusal with a stable code, which the CLI and the portal show as it is.
export class AdminError extends Error {
  override readonly name = 'AdminError';
  readonly code: string;
  /** Seconds until the operation may be tried again (a throttled login or mail request). */
  readonly retryAfter: number | undefined;
  constructor(code: string, message: string, retryAfter?: number) {
    super(message);
    this.code = code;
    this.retryAfter = retryAfter;
  }
}
