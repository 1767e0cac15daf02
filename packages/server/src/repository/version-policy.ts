/**
 * Which versions of a model load: numeric version directories (no leading zeros; others are ignored with
 * a warning, as Triton does) filtered by the config's version_policy: latest { num_versions } (default
 * latest 1), all, or specific { versions } (listed versions without a directory are logged and skipped).
 */
import type { ModelVersionPolicy } from "@tbench/proto";
import type { Logger } from "../core/logger.js";
import { int64List } from "./config-numbers.js";

/** The numeric version directory names among `entries`, ascending; warns about the others. */
export function versionDirectories(model: string, entries: readonly string[], logger: Logger): number[] {
  const versions: number[] = [];
  for (const entry of entries) {
    if (entry.length > 1 && entry.startsWith("0")) {
      logger.warn(
        `ignore version directory '${entry}' of '${model}' which contains leading zeros in its directory name`,
      );
    } else if (/^\d+$/.test(entry)) {
      versions.push(Number(entry));
    } else {
      logger.warn(
        `ignore version directory '${entry}' of '${model}' which fails to convert to integral number`,
      );
    }
  }
  return versions.sort((a, b) => a - b);
}

/** The versions `policy` selects from `available` (ascending). */
export function selectVersions(
  model: string,
  policy: ModelVersionPolicy | undefined,
  available: readonly number[],
  logger: Logger,
): number[] {
  if (policy?.specific) {
    const versions = int64List(policy.specific.versions, `version_policy of '${model}'`);
    const wanted = [...new Set(versions)].sort((a, b) => a - b);
    return wanted.filter((v) => {
      if (available.includes(v)) return true;
      logger.error(
        `version ${v} is specified for model '${model}', but the version directory is not present`,
      );
      return false;
    });
  }
  if (policy?.all) return [...available];
  const count = Math.max(1, policy?.latest?.num_versions || 1);
  return available.slice(-count);
}
