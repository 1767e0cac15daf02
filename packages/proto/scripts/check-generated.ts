// `npm run check:generated`: regenerates into a temporary directory and fails, listing the files, when the
// result differs from the committed src/gen/ (a stale, edited, missing or extra generated file).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { defaultOutDir, generateFiles } from "./generate.js";

const expected = await generateFiles();
const problems: string[] = [];
for (const [name, text] of expected) {
  const path = join(defaultOutDir, name);
  if (!existsSync(path)) problems.push(`missing: ${name}`);
  else if (readFileSync(path, "utf8") !== text) problems.push(`differs: ${name}`);
}
const present = existsSync(defaultOutDir) ? readdirSync(defaultOutDir) : [];
for (const name of present) if (!expected.has(name)) problems.push(`not generated (remove it): ${name}`);

const shown = relative(process.cwd(), defaultOutDir) || defaultOutDir;
if (problems.length > 0) {
  console.error(`generated code in ${shown} is out of date with proto/*.proto:`);
  for (const problem of problems) console.error(`  ${problem}`);
  console.error("run `npm run generate` and commit the result");
  process.exit(1);
}
console.log(`generated code in ${shown} is up to date (${expected.size} files)`);
