/**
 * Errors of the OpenAI-compatible endpoint in OpenAI's shape: `{"error": {"message", "type", "param",
 * "code"}}`, which the OpenAI SDKs read into their error classes (by status: 400 BadRequestError, 404
 * NotFoundError, ...). An OpenAiError is an HttpError, so the front end logs, clips and answers it as any
 * other; its `param` and `code` name the request field at fault and OpenAI's code for the failure. Any
 * other error (a core ServerError, a body-reader HttpError) keeps its status and message and gets the type
 * and code its status implies.
 */
import type { ServerResponse } from "node:http";
import { HttpError } from "../http-error.js";
import { sendJson } from "../respond.js";

/** OpenAI's error types (the `type` member). */
export type OpenAiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "server_error";

/** An error the OpenAI endpoint answers with its own status, type, param and code. */
export class OpenAiError extends HttpError {
  readonly type: OpenAiErrorType;
  readonly param: string | null;
  readonly code: string | null;

  constructor(
    statusCode: number,
    message: string,
    details: { type?: OpenAiErrorType; param?: string | null; code?: string | null } = {},
  ) {
    super(statusCode, message);
    this.type = details.type ?? typeForStatus(statusCode);
    this.param = details.param ?? null;
    this.code = details.code ?? null;
  }
}

/** The type OpenAI gives a status: its 404 for a model is an invalid request too. */
function typeForStatus(status: number): OpenAiErrorType {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** OpenAI's code for a status when the error names none (the body reader's size limit, a core error). */
function codeForStatus(status: number): string | null {
  switch (status) {
    case 413:
      return "content_too_large";
    case 501:
      return "unsupported";
    case 503:
      return "unavailable";
    default:
      return null;
  }
}

/** A 400 about one request field. */
export function invalidRequest(message: string, param: string | null, code: string | null): OpenAiError {
  return new OpenAiError(400, message, { param, code });
}

/** OpenAI's 404 for a model that is not there, or not one this endpoint serves. */
export function modelNotFound(model: string, why = "does not exist"): OpenAiError {
  return new OpenAiError(404, `The model \`${model}\` ${why}`, { param: "model", code: "model_not_found" });
}

/** The JSON body of an error, `message` already clipped by the front end. */
export function openAiErrorBody(status: number, message: string, error: unknown): string {
  const known = error instanceof OpenAiError ? error : undefined;
  return JSON.stringify({
    error: {
      message,
      type: known?.type ?? typeForStatus(status),
      param: known?.param ?? null,
      code: known !== undefined ? known.code : codeForStatus(status),
    },
  });
}

/** Answers an error in OpenAI's shape (the front end's error writer for /v1 routes). */
export function sendOpenAiError(res: ServerResponse, status: number, message: string, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, openAiErrorBody(status, message, error));
}
