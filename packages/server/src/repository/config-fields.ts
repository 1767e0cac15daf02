/**
 * Typed reads of a model configuration in proto3-JSON form (snake_case names, int64 as decimal strings,
 * enums as names), as `parseModelConfig` from @tbench/proto returns it. Absent fields read as proto3
 * defaults (0, "", false, []), so a config that leaves a field out behaves as Triton's would.
 */

/** A mutable proto3-JSON object (the config is cloned before auto-complete and normalization edit it). */
export type ConfigObject = Record<string, unknown>;

/** The object at `key`, or undefined when absent or not an object. */
export function objectField(obj: ConfigObject | undefined, key: string): ConfigObject | undefined {
  const value = obj?.[key];
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as ConfigObject)
    : undefined;
}

/** The array at `key` (empty when absent). */
export function arrayField(obj: ConfigObject | undefined, key: string): unknown[] {
  const value = obj?.[key];
  return Array.isArray(value) ? value : [];
}

/** The objects of the array at `key`. */
export function objectArrayField(obj: ConfigObject | undefined, key: string): ConfigObject[] {
  return arrayField(obj, key).filter((v): v is ConfigObject => v !== null && typeof v === "object");
}

/** A numeric field; int64 fields arrive as decimal strings. NaN for a value that is not a number. */
export function toNumber(value: unknown): number {
  if (value === undefined || value === null || value === "") return 0;
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string") return Number(value.trim());
  if (typeof value === "boolean") return value ? 1 : 0;
  return Number.NaN;
}

/** The number at `key` (0 when absent). */
export function numberField(obj: ConfigObject | undefined, key: string): number {
  return toNumber(obj?.[key]);
}

/** The string at `key` ("" when absent). */
export function stringField(obj: ConfigObject | undefined, key: string): string {
  const value = obj?.[key];
  return typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
}

/** The boolean at `key` (false when absent). */
export function boolField(obj: ConfigObject | undefined, key: string): boolean {
  const value = obj?.[key];
  return value === true || value === "true";
}

/** A dims list (`["16", "-1"]` or numbers) as numbers. */
export function dimsField(obj: ConfigObject | undefined, key: string): number[] {
  return arrayField(obj, key).map(toNumber);
}

/** True when the field is present (proto3 JSON may omit defaults, so presence of messages matters). */
export function hasField(obj: ConfigObject | undefined, key: string): boolean {
  return obj !== undefined && obj[key] !== undefined && obj[key] !== null;
}

/** A deep copy of a proto3-JSON config (plain data only). */
export function cloneConfig<T>(config: T): T {
  return structuredClone(config);
}

/** Dims as Triton prints them: `[-1,16]`. */
export function dimsToString(dims: readonly number[]): string {
  return `[${dims.join(",")}]`;
}
