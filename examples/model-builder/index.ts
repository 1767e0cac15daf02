/**
 * @tbench/model-builder: the bundled model repository, built in code. A private workspace package (never
 * published, TypeScript sources only, run through tsx): `npm run models` and tests in every package use it.
 * `@tbench/model-builder/prng` offers the seeded generator alone, with no dependency, for @tbench/proto's
 * own test helpers.
 */

export {
  GENERATOR_EOS_ID,
  GENERATOR_SIZES,
  type GeneratorStepResult,
  generatorDecode,
  generatorEncode,
  generatorGreedyText,
  generatorStep,
  generatorSuccessor,
} from "./generator-reference.js";
export { MLP_SIZES, mlpForward } from "./mlp-reference.js";
export { type BundledModel, bundledModels, committedFiles } from "./model-catalog.js";
export {
  buildIdentityModel,
  IDENTITY_DATATYPES,
  type IdentityDatatype,
  identityModelName,
} from "./models/identity.js";
export { buildLargeStateAccumulatorModel } from "./models/sequence.js";
export { createMulberry32, layerWeights, type Random, uniformFloat32 } from "./prng.js";
export {
  BUNDLED_MODEL_REPOSITORY,
  type WriteModelRepositoryOptions,
  type WrittenModel,
  writeModelRepository,
} from "./write-model-repository.js";
