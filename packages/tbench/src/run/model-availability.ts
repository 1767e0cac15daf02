import {
  type InferenceClient,
  InferenceError,
  type InferenceErrorOptions,
  ModelNotFoundError,
  type RepositoryIndexEntry,
  UnavailableError,
} from "@tbench/client";

/** How many other model names a "no such model" message lists at most. */
const LISTED_NAMES = 10;

/**
 * Whether a failed metadata call means the model (version) is not there or not ready: Triton answers
 * NOT_FOUND for an unknown name or no ready version, UNAVAILABLE for a version not ready, and
 * INVALID_ARG for an unknown name when model namespacing is on.
 */
function isModelUnavailable(error: unknown): error is InferenceError {
  if (error instanceof ModelNotFoundError || error instanceof UnavailableError) return true;
  return (
    error instanceof InferenceError &&
    error.code === "INVALID_ARGUMENT" &&
    /unknown model/i.test(error.message)
  );
}

function describeEntry(entry: RepositoryIndexEntry): string {
  const version = entry.version === undefined ? "" : `version ${entry.version} `;
  // Triton lists a model it never tried to load (explicit model control) with no version and no state.
  if (entry.state === undefined) return `${version}is not loaded`.trim();
  const reason = entry.reason === undefined || entry.reason === "" ? "" : `: ${entry.reason}`;
  return `${version}is ${entry.state}${reason}`;
}

function describe(
  model: string,
  version: string | undefined,
  index: readonly RepositoryIndexEntry[],
): string {
  const entries = index.filter((e) => e.name === model);
  if (entries.length === 0) {
    const names = [...new Set(index.map((e) => e.name))].sort();
    const listed = names.slice(0, LISTED_NAMES).join(", ");
    const more = names.length > LISTED_NAMES ? `, ... (${names.length} in all)` : "";
    return names.length === 0
      ? `the server's repository index lists no models`
      : `the server's repository index has no model '${model}' (it lists: ${listed}${more})`;
  }
  // The version asked for, if the index has it; otherwise every version, so the user sees what there is.
  const asked = version === undefined ? [] : entries.filter((e) => e.version === version);
  const shown = asked.length > 0 ? asked : entries;
  return `model '${model}' ${shown.map(describeEntry).join("; ")}`;
}

function rewrap(error: InferenceError, message: string): InferenceError {
  const options: InferenceErrorOptions = { cause: error };
  if (error.status !== undefined) options.status = error.status;
  if (error.requestId !== undefined) options.requestId = error.requestId;
  if (error.serverMessage !== undefined) options.serverMessage = error.serverMessage;
  if (error instanceof ModelNotFoundError) return new ModelNotFoundError(message, options);
  if (error instanceof UnavailableError) return new UnavailableError(message, options);
  return new InferenceError(error.code, message, options);
}

/**
 * Explains why tbench's first call on a model failed, from the server's repository index: Triton answers
 * "has no available versions" for a model that failed to load, while `POST /v2/repository/index` holds
 * its state and the load error. Returns the error to report: the same kind of error, its message saying
 * the model's state and reason then what the server answered, or `error` itself when it is not about
 * the model's availability or the index cannot be read (no repository extension, restricted, down).
 */
export async function explainModelError(
  client: InferenceClient,
  model: string,
  version: string | undefined,
  error: unknown,
  signal?: AbortSignal,
): Promise<unknown> {
  if (!isModelUnavailable(error)) return error;
  let index: readonly RepositoryIndexEntry[];
  try {
    index = await client.repositoryIndex(undefined, signal === undefined ? {} : { signal });
  } catch {
    return error;
  }
  return rewrap(error, `${describe(model, version, index)} (the server answered: ${error.message})`);
}
