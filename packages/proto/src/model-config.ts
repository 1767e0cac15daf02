// The TypeScript form of Triton's ModelConfig: the proto3 JSON form with the original field names, as
// config.pbtxt, Triton's HTTP `/config` endpoint and ModelConfigResponse (as JSON) spell it. The types are
// generated from proto/model_config.proto (src/gen/model-config-types.ts, `npm run generate`).
export type * from "./gen/model-config-types.js";
