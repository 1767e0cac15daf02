/**
 * `identity_<type>`: OUTPUT0 = INPUT0 for one datatype, with a batch dimension and one variable dimension.
 * Used to check that every datatype survives the wire and the server unchanged.
 *
 * BF16 is left out on purpose: onnxruntime-node 1.30 has no bfloat16 tensor type (its `Tensor` cannot be
 * created with type "bfloat16"), so an `identity_bf16` model could load but never receive an input from Node.
 */
import { DATATYPES, type Datatype } from "@tbench/proto";
import { createGraphBuilder } from "../graph-builder.js";

/** The datatypes that get an identity model: every v2 datatype onnxruntime-node can pass through Identity. */
export const IDENTITY_DATATYPES = DATATYPES.filter(
  (datatype): datatype is Exclude<Datatype, "BF16"> => datatype !== "BF16",
);

/** A datatype that has an identity model. */
export type IdentityDatatype = (typeof IDENTITY_DATATYPES)[number];

/** The model name for a datatype: `identity_` and the lowercase v2 name (`identity_fp32`). */
export function identityModelName(datatype: IdentityDatatype): string {
  return `identity_${datatype.toLowerCase()}`;
}

/** Builds `identity_<type>/1/model.onnx`. */
export function buildIdentityModel(datatype: IdentityDatatype): Uint8Array {
  const g = createGraphBuilder({
    name: identityModelName(datatype),
    docString: `OUTPUT0 = INPUT0 (${datatype})`,
  });
  const shape = ["batch", "n"];
  g.input("INPUT0", datatype, shape);
  g.node("Identity", ["INPUT0"], ["OUTPUT0"]);
  g.output("OUTPUT0", datatype, shape);
  return g.build();
}
