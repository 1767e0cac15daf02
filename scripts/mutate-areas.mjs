// The areas `npm run mutate` measures: the code that makes decisions, each with the unit tests beside it.
// Smallest first, so a partial run still reports whole areas. `mutate` takes the files to mutate, `tests`
// the test files the tap runner runs (each file is one test for Stryker's per-test coverage).

/** @type {readonly { name: string, mutate: string[], tests: string[] }[]} */
export const MUTATION_AREAS = [
  {
    name: "tbench-load-schedules",
    mutate: ["packages/tbench/src/load/schedule.ts"],
    tests: ["packages/tbench/src/load/schedule.test.ts"],
  },
  {
    name: "client-errors-retries",
    mutate: ["packages/client/src/error-mapping.ts", "packages/client/src/retry-policy.ts"],
    tests: [
      "packages/client/src/error-mapping.test.ts",
      "packages/client/src/errors.test.ts",
      "packages/client/src/retry-policy.test.ts",
    ],
  },
  {
    name: "tbench-measure",
    mutate: [
      "packages/tbench/src/measure/stability.ts",
      "packages/tbench/src/stats/latency-stats.ts",
      "packages/tbench/src/stats/histogram.ts",
      "packages/tbench/src/measure/sweep.ts",
      "packages/tbench/src/report/merge-results.ts",
      "packages/tbench/src/report/compare-results.ts",
    ],
    tests: [
      "packages/tbench/src/stats/latency-stats.test.ts",
      "packages/tbench/src/measure/stability.test.ts",
      "packages/tbench/src/measure/sweep.test.ts",
      "packages/tbench/src/measure/level-profiler.test.ts",
      "packages/tbench/src/report/merge-results.test.ts",
      "packages/tbench/src/report/compare-results.test.ts",
    ],
  },
  {
    name: "server-validation-status",
    mutate: [
      "packages/server/src/lifecycle/request-validation.ts",
      "packages/proto/src/status-codes.ts",
      "packages/server/src/http/http-error.ts",
    ],
    tests: [
      "packages/server/src/lifecycle/request-validation.test.ts",
      "packages/proto/src/status-codes.test.ts",
      "packages/server/src/http/http-error.test.ts",
    ],
  },
  {
    name: "server-scheduler",
    mutate: [
      "packages/server/src/scheduler/priority-queue.ts",
      "packages/server/src/scheduler/dynamic-batcher.ts",
      "packages/server/src/scheduler/batch-assembly.ts",
      "packages/server/src/scheduler/model-scheduler.ts",
    ],
    tests: [
      "packages/server/src/scheduler/priority-queue.test.ts",
      "packages/server/src/scheduler/dynamic-batcher.test.ts",
      "packages/server/src/scheduler/batch-assembly.test.ts",
      "packages/server/src/scheduler/model-scheduler.test.ts",
      "packages/server/src/scheduler/pending-cap.test.ts",
    ],
  },
];
