// `npm run generate`: regenerates every file in src/gen/ from proto/*.proto.
//   static.js, static.d.ts     pbjs/pbts static code (encode/decode/fromObject/toObject per message)
//   descriptor.ts              protobufjs JSON reflection descriptor (protoRoot(), the pbtxt codec)
//   model-config-types.ts      TypeScript types of ModelConfig's proto3 JSON form
//   services.ts                gRPC method tables (path, streaming flags, static request/response classes)
// Usage: tsx scripts/generate.ts [outDir]   (default: src/gen)
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { emitDescriptor } from "./emit-descriptor.js";
import { emitModelConfigTypes } from "./emit-model-config-types.js";
import { emitServices } from "./emit-services.js";
import { emitStatic } from "./emit-static.js";
import { loadProtoRoot } from "./proto-sources.js";

/** The package's committed output directory. */
export const defaultOutDir = fileURLToPath(new URL("../src/gen/", import.meta.url));

/** Every generated file: name in the output directory -> contents. */
export async function generateFiles(): Promise<Map<string, string>> {
  const root = loadProtoRoot();
  const files = new Map<string, string>();
  const { js, dts } = await emitStatic();
  files.set("static.js", js);
  files.set("static.d.ts", dts);
  files.set("descriptor.ts", emitDescriptor(root));
  files.set("model-config-types.ts", emitModelConfigTypes(root).text);
  files.set("services.ts", emitServices(root));
  return files;
}

/** Writes the generated files into `outDir`, removing any other file there (gen/ holds only output). */
export async function generate(outDir: string): Promise<string[]> {
  const files = await generateFiles();
  mkdirSync(outDir, { recursive: true });
  for (const entry of readdirSync(outDir))
    if (!files.has(entry)) rmSync(join(outDir, entry), { recursive: true });
  for (const [name, text] of files) writeFileSync(join(outDir, name), text);
  return [...files.keys()];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = resolve(process.argv[2] ?? defaultOutDir);
  const written = await generate(outDir);
  console.log(`generated ${written.join(", ")} in ${outDir}`);
}
