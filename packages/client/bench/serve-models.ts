// Child-process entry of the client benchmark: starts tbench-server on a free port with the named models
// loaded and prints its HTTP URL and gRPC address as one JSON line, so the server never shares the benchmark's event loop.
import { silentLogger, startServer } from "@tbench/server";

const server = await startServer({
  modelRepository: new URL("../../../examples/models", import.meta.url).pathname,
  httpPort: 0,
  httpAddress: "127.0.0.1",
  metricsPort: false,
  grpcPort: 0,
  modelControlMode: "explicit",
  loadModels: process.argv.slice(2),
  logger: silentLogger,
});
process.stdout.write(`${JSON.stringify({ httpUrl: server.httpUrl, grpcAddress: server.grpcAddress })}\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
