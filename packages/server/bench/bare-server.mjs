// The floor under any Node HTTP server: a bare node:http handler that reads the whole request body and
// writes a fixed answer: the exact bytes and headers tbench-server answered to the same request (given in
// a JSON file as {"headers": {...}, "body": "<base64>"}). What it costs per request is what node:http
// itself costs for those bytes. Usage: node bare-server.mjs <answer.json>; prints {"httpUrl"}.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const answer = JSON.parse(readFileSync(process.argv[2], "utf8"));
const body = Buffer.from(answer.body, "base64");

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    Buffer.concat(chunks);
    res.writeHead(200, answer.headers);
    res.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ httpUrl: `http://127.0.0.1:${server.address().port}` }));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
