// @tbench/bench-kit: what the benchmark programs share (private, never published). See README.md.
export {
  atLeast,
  atMost,
  type BenchOptions,
  benchOptions,
  type Environment,
  environmentMarkdown,
  INVALID_ABOVE_LIMIT,
  median,
  medianRatio,
  perRoundRatios,
  ROOT,
  rotate,
  type Spread,
  shareOfLimit,
  spread,
  startEnvironment,
  type Verdict,
  verdictMarkdown,
  writeResult,
} from "./bench-kit.js";
export { captureInferRequest, checkRequest, describeRequest, type WireRequest } from "./capture-request.js";
export { type Child, type ChildOptions, startChild } from "./child-process.js";
export { loadFigureOf, runTbenchCli, TBENCH_BIN, type TbenchLevelFigures } from "./run-tbench.js";
export {
  parseStartupLines,
  startTbenchServer,
  type TbenchServer,
  type TbenchServerAddresses,
  type TbenchServerOptions,
  tbenchServerCommand,
} from "./tbench-server.js";
export { findWrk, type LoadFigure, runWrk, type WrkRunOptions, wrkScript } from "./wrk-run.js";
