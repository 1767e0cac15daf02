// The baseline a JavaScript developer writes by hand (the seed's "one web service per model"): node:http,
// read the JSON body, copy its data into a Float32Array, one onnxruntime-node `session.run()` per request
// on the main thread, write the JSON answer. No batching, no worker thread, no validation beyond what the
// model needs. Usage: node naive-server.mjs <model.onnx> <model name>; prints {"httpUrl"} once listening.
import { createServer } from "node:http";
import * as ort from "onnxruntime-node";

const [modelPath, modelName] = process.argv.slice(2);
if (modelPath === undefined || modelName === undefined) {
  console.error("usage: naive-server.mjs <model.onnx> <model name>");
  process.exit(2);
}
// The instance's settings in tbench-server: one intra-op and one inter-op thread.
const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
const [inputName] = session.inputNames;
const [outputName] = session.outputNames;

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const input = body.inputs[0];
      const tensor = new ort.Tensor("float32", Float32Array.from(input.data), input.shape);
      const result = await session.run({ [inputName]: tensor });
      const output = result[outputName];
      const answer = JSON.stringify({
        model_name: modelName,
        model_version: "1",
        outputs: [{ name: outputName, datatype: "FP32", shape: output.dims, data: Array.from(output.data) }],
      });
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(answer) });
      res.end(answer);
    } catch (error) {
      res.writeHead(400, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: String(error) }));
    }
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ httpUrl: `http://127.0.0.1:${server.address().port}` }));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
