// Starts tbench-server (built: packages/server/dist) on free ports with the bundled repository and the
// models named on the command line, prints {"httpUrl", "metricsUrl"} as one JSON line, stops on SIGTERM.
// With --grpc among the arguments the gRPC front end listens too (a free port; "grpcAddress" in the line).
// Used by the tbench benchmark and by `npm run demo`, which run it in a child process so that the server
// and the load generator never share an event loop.
import { startServer } from "@tbench/server";

const grpc = process.argv.includes("--grpc");
const models = process.argv.slice(2).filter((arg) => arg !== "--grpc");
const quiet = { error: (message) => console.error(message), warn() {}, info() {}, verbose() {}, debug() {} };
const server = await startServer({
  modelRepository: new URL("../../../examples/models", import.meta.url).pathname,
  httpPort: 0,
  metricsPort: 0,
  ...(grpc ? { grpcPort: 0 } : {}),
  modelControlMode: "explicit",
  loadModels: models,
  logger: quiet,
});
console.log(
  JSON.stringify({ httpUrl: server.httpUrl, metricsUrl: server.metricsUrl, grpcAddress: server.grpcAddress }),
);
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
