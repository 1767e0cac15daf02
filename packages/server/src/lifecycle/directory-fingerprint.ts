/**
 * A fingerprint of a model directory: what tells the lifecycle (and so poll mode) that a model changed on
 * disk. Triton compares modification times of the directory's contents; this adds sizes and names, so an
 * edit, an addition, a removal or a rename anywhere under the directory changes it.
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

/** Most paths one model directory may hold for its fingerprint (a directory beyond it counts as changed). */
const MAX_FINGERPRINT_ENTRIES = 10_000;

/**
 * A fingerprint of everything under a model directory that a load reads: each path with its size and
 * modification time, in a stable order. Any edit, addition or removal changes it.
 */
export async function fingerprintModelDirectory(directory: string): Promise<string> {
  const parts: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (parts.length >= MAX_FINGERPRINT_ENTRIES) return;
      const path = join(dir, entry.name);
      const info = await stat(path).catch(() => undefined);
      if (!info) continue;
      const relative = prefix + entry.name;
      if (info.isDirectory()) {
        parts.push(`${relative}/`);
        await walk(path, `${relative}/`);
      } else {
        parts.push(`${relative}:${info.size}:${info.mtimeMs}`);
      }
    }
  };
  await walk(directory, "");
  return parts.join("\n");
}
