/**
 * Triton's answers when a request's JSON has the wrong shape. Triton's HTTP server reads request JSON
 * through TritonJson (triton common `triton_json.h`), whose accessors fail with fixed texts ("attempt to
 * access JSON non-string as string"), and prefixes the field (`RETURN_MSG_IF_ERR(..., "Unable to parse
 * 'shape'")` gives "Unable to parse 'shape': attempt to ..."). Those failures carry TritonJson's error
 * code, which server `src/http_server.cc` defines as TRITONSERVER_ERROR_INTERNAL
 * (`#define TRITONJSON_STATUSRETURN(M) return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, ...)`),
 * so HttpCodeFromError answers them with 500; Triton's own QA asserts it (qa/L0_http/http_test.py,
 * test_negative_dimensions: 500 "Unable to parse 'shape': attempt to access JSON non-unsigned-integer as
 * unsigned-integer"). tbench-server answers the same status and words.
 */
import { HttpError } from "./http-error.js";

/** The HTTP status of a TritonJson failure (INTERNAL through HttpCodeFromError). */
export const TRITON_JSON_STATUS = 500;

/** TritonJson's accessor failures, word for word. */
export const NON_STRING = "attempt to access JSON non-string as string";
export const NON_BOOLEAN = "attempt to access JSON non-boolean as boolean";
export const NON_UNSIGNED = "attempt to access JSON non-unsigned-integer as unsigned-integer";
export const NON_SIGNED = "attempt to access JSON non-signed-integer as signed-integer";
export const NON_NUMBER = "attempt to access JSON non-number as double";
export const NON_ARRAY = "attempt to access JSON non-array as array";
export const NON_OBJECT_MEMBERS = "attempt to get members for non-object";

/** TritonJson's failure for a member that is absent (or read from something that is not an object). */
export function missingMember(name: string): string {
  return `attempt to access non-existing object member '${name}'`;
}

/** `<what>: <detail>` with TritonJson's status, as RETURN_MSG_IF_ERR builds it. */
export function tritonJsonError(what: string, detail: string): HttpError {
  return new HttpError(TRITON_JSON_STATUS, `${what}: ${detail}`);
}

/** A JSON object, as JSON.parse returns one. */
export type JsonObject = Record<string, unknown>;

/** Whether `value` is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** rapidjson's IsUint64 for a JSON.parse number: a non-negative integer up to 2^64 - 1. */
export function isUnsignedInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value < 2 ** 64;
}

/*
 * Members are read as plain properties: JSON.parse never makes an undefined value, and none of the
 * protocol's member names is a property of Object.prototype, so undefined means absent (and this is the
 * hot path, where Object.hasOwn would cost).
 */

/**
 * TritonJson MemberAsString on member `name`, given its value (undefined when absent): the string, or
 * Triton's failure prefixed with `what`.
 */
export function expectString(value: unknown, name: string, what: string): string {
  if (typeof value === "string") return value;
  throw tritonJsonError(what, value === undefined ? missingMember(name) : NON_STRING);
}

/** TritonJson MemberAsArray on member `name`, given its value: the array, or Triton's failure. */
export function expectArray(value: unknown, name: string, what: string): unknown[] {
  if (Array.isArray(value)) return value;
  throw tritonJsonError(what, value === undefined ? missingMember(name) : NON_ARRAY);
}

/** TritonJson Find on a value that may not be an object: the member, or undefined. */
export function findMember(object: unknown, name: string): unknown {
  return isObject(object) ? object[name] : undefined;
}
