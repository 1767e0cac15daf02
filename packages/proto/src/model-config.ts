// Placeholder until the generated ModelConfig types land (packages/proto/src/gen/model-config-types.ts).
export type ModelConfig = { [field: string]: unknown };
