// Test helpers that more than one package needs live in each package's own src/testing (a package never
// reaches into another's), as identical copies. This fails when a copy drifts from the others, naming it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const root = new URL("..", import.meta.url).pathname;

/** Each helper and the packages that hold a copy of it; the first copy is the one the others must equal. */
const COPIES: Record<string, readonly string[]> = {
  "src/testing/tls-certificates.ts": ["packages/server", "packages/client", "packages/tbench"],
};

for (const [file, packages] of Object.entries(COPIES)) {
  test(`${file} is the same in ${packages.join(", ")}`, () => {
    const [first, ...others] = packages.map((p) => ({
      path: `${p}/${file}`,
      text: readFileSync(root + `${p}/${file}`, "utf8"),
    }));
    for (const other of others)
      assert.equal(
        other.text,
        first!.text,
        `${other.path} differs from ${first!.path}: change them together`,
      );
  });
}
