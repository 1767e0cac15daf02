/** A mistake in how tbench was called: printed as one line on stderr, exit code 2, no stack trace. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  readonly exitCode = 2;
}
