/**
 * The deployment files checked without a Docker engine or a cluster (issue 15, items 1 and 4):
 * docker-compose.yml through Debian's `docker-compose config`, deploy/prometheus.yml through `promtool check
 * config` (each skipped where missing, except under .ci/run, which installs both), every manifest under deploy/k8s against the Kubernetes schema
 * (kubernetes-models), and the references between them (mounted files exist, the Job reaches the Service,
 * claims exist). Each validator is also shown a broken file, so a check that stopped checking would fail.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Deployment } from "kubernetes-models/apps/v1";
import { Job } from "kubernetes-models/batch/v1";
import { PersistentVolumeClaim, Service } from "kubernetes-models/v1";
import { parse, parseAllDocuments } from "yaml";
import { skipWithout } from "./testing/system-tools.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const K8S = join(ROOT, "deploy/k8s");

/** Runs a tool .ci/run installs; where its suite was not skipped, its absence fails, naming the package. */
function tool(command: string, debianPackage: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("BENCH_")));
  const result = spawnSync(command, args, { cwd: ROOT, encoding: "utf8", env: { ...clean, ...env } });
  if (result.error && (result.error as NodeJS.ErrnoException).code === "ENOENT")
    assert.fail(`${command} is not installed: .ci/run installs Debian's ${debianPackage} package`);
  return { code: result.status, output: `${result.stdout}${result.stderr}`, stdout: result.stdout };
}

const compose = (args: readonly string[], env?: NodeJS.ProcessEnv) =>
  tool("docker-compose", "docker-compose", args, env);

type Doc = Record<string, unknown>;
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "batch/v1/Job": Job,
  "v1/Service": Service,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
};

/** Every document of every manifest, validated against the schema of its apiVersion and kind. */
function validateManifest(path: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(path, "utf8"));
  const out: Doc[] = [];
  for (const doc of docs) {
    assert.deepEqual(doc.errors, [], `${path}: YAML errors`);
    const data = doc.toJS() as Doc | null;
    if (data === null) continue;
    const key = `${String(data["apiVersion"])}/${String(data["kind"])}`;
    const Model = MODELS[key];
    assert.ok(Model, `${path}: expected one of ${Object.keys(MODELS).join(", ")}, got ${key}`);
    try {
      new Model(data as never).validate();
    } catch (error) {
      assert.fail(`${path}: ${key} ${(data["metadata"] as Doc)?.["name"]}: ${(error as Error).message}`);
    }
    out.push(data);
  }
  return out;
}

describe("docker-compose.yml (docker-compose config)", { skip: skipWithout("docker-compose") }, () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tbench-deploy-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is valid with every profile, and names the stack's services", () => {
    const check = compose(["--profile", "triton", "--profile", "bench", "config", "-q"]);
    assert.equal(check.code, 0, check.output);
    const services = compose(["--profile", "triton", "--profile", "bench", "config", "--services"]);
    assert.deepEqual(services.stdout.trim().split("\n").sort(), [
      "bench",
      "grafana",
      "prometheus",
      "tbench-server",
      "triton",
    ]);
    // Without a profile only the tbench-server stack starts (docker-compose 1.29 lists every service, so
    // the profiles are read from the resolved file).
    const resolved = parse(compose(["config"]).stdout).services as Record<string, Doc>;
    const inProfiles = Object.entries(resolved).filter(([, s]) => s["profiles"] !== undefined);
    assert.deepEqual(inProfiles.map(([name, s]) => `${name}: ${String(s["profiles"])}`).sort(), [
      "bench: bench",
      "triton: triton",
    ]);
  });

  it("mounts files that exist, shifts Triton's ports and reserves it a GPU", () => {
    const config = parse(compose(["--profile", "triton", "--profile", "bench", "config"]).stdout);
    for (const [name, service] of Object.entries(config.services as Record<string, Doc>)) {
      for (const volume of (service["volumes"] ?? []) as string[]) {
        const source = volume.split(":")[0]!;
        // The bench results directory is created by the run; everything else must be in the repository.
        if (source.endsWith("bench-results/compose")) continue;
        assert.ok(existsSync(source), `${name} mounts ${source}, which does not exist`);
      }
    }
    const services = config.services as Record<string, Doc>;
    const ports = (s: Doc) =>
      (s["ports"] as { published: number | string; target: number }[]).map(
        (p) => `${p.published}:${p.target}`,
      );
    assert.deepEqual(ports(services["tbench-server"]!), ["8000:8000", "8001:8001", "8002:8002"]);
    assert.deepEqual(ports(services["triton"]!), ["9000:8000", "9001:8001", "9002:8002"]);
    assert.match(String(services["triton"]!["image"]), /^nvcr\.io\/nvidia\/tritonserver:\d+\.\d+-py3$/);
    const devices = (services["triton"]!["deploy"] as Doc)["resources"] as {
      reservations: { devices: Doc[] };
    };
    assert.deepEqual(devices.reservations.devices[0]!["capabilities"], ["gpu"]);
    // Grafana loads the dashboard helper K's test proves against Prometheus.
    assert.ok(existsSync(join(ROOT, "deploy/grafana/dashboards/tbench.json")));
    const provider = parse(
      readFileSync(join(ROOT, "deploy/grafana/provisioning/dashboards/tbench.yml"), "utf8"),
    );
    // docker-compose 1.29 writes volumes as absolute "source:target:mode" strings.
    const grafanaMounts = (services["grafana"]!["volumes"] as string[]).map((v) => {
      const [source = "", target = ""] = v.split(":");
      return [source.replace(ROOT, ""), target];
    });
    assert.ok(
      grafanaMounts.some(
        ([s, t]) => s === "deploy/grafana/dashboards" && t === provider.providers[0].options.path,
      ),
      JSON.stringify(grafanaMounts),
    );
  });

  it("runs tbench with the same flags against tbench-server or Triton", () => {
    const command = (env: NodeJS.ProcessEnv) =>
      (parse(compose(["--profile", "bench", "config"], env).stdout).services.bench.command as string[]).join(
        " ",
      );
    const ours = command({});
    const triton = command({ BENCH_TARGET: "triton" });
    assert.match(ours, /-u tbench-server:8000 /);
    assert.equal(triton, ours.replaceAll("tbench-server", "triton"));
  });

  it("refuses a broken compose file (the check can fail)", async () => {
    const broken = join(dir, "docker-compose.yml");
    await writeFile(broken, "services:\n  a:\n    image: x\n    healthcheck:\n      test: [CMD, {a: b}]\n");
    const result = compose(["-f", broken, "config", "-q"]);
    assert.notEqual(result.code, 0);
    assert.match(result.output, /invalid/);
  });
});

describe("deploy/prometheus.yml (promtool check config)", { skip: skipWithout("promtool") }, () => {
  it("is a valid Prometheus configuration scraping tbench-server and Triton", () => {
    const result = tool("promtool", "prometheus", ["check", "config", "deploy/prometheus.yml"]);
    assert.equal(result.code, 0, result.output);
    const config = parse(readFileSync(join(ROOT, "deploy/prometheus.yml"), "utf8"));
    const targets = (config.scrape_configs as { static_configs: { targets: string[] }[] }[]).flatMap((c) =>
      c.static_configs.flatMap((s) => s.targets),
    );
    assert.deepEqual(targets, ["tbench-server:8002", "triton:8002"]);
  });

  it("refuses a broken configuration (the check can fail)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tbench-promtool-"));
    try {
      const broken = join(dir, "prometheus.yml");
      await writeFile(broken, "global:\n  scrape_interval: often\n");
      const result = tool("promtool", "prometheus", ["check", "config", broken]);
      assert.notEqual(result.code, 0);
      assert.match(result.output, /often/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("deploy/k8s (Kubernetes schema, kubernetes-models)", () => {
  const files = readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f));
  const docs = files.flatMap((f) => validateManifest(join(K8S, f)));
  const find = (kind: string, name: string) => {
    const doc = docs.find((d) => d["kind"] === kind && (d["metadata"] as Doc)["name"] === name);
    assert.ok(doc, `deploy/k8s has no ${kind} ${name}`);
    // biome-ignore lint/suspicious/noExplicitAny: plain data, already checked against the schema above
    return doc as never as Record<string, any>;
  };

  it("every manifest is valid", () => {
    assert.ok(files.length >= 4, files.join(", "));
    assert.ok(docs.length >= 5);
  });

  it("the server is probed on the v2 health endpoints, scraped, and reachable through its Service", () => {
    const deployment = find("Deployment", "tbench-server");
    const pod = deployment.spec.template;
    const container = pod.spec.containers[0];
    assert.equal(container.readinessProbe.httpGet.path, "/v2/health/ready");
    assert.equal(container.livenessProbe.httpGet.path, "/v2/health/live");
    assert.equal(pod.metadata.annotations["prometheus.io/scrape"], "true");
    assert.equal(pod.metadata.annotations["prometheus.io/port"], "8002");
    assert.ok(container.resources.requests && container.resources.limits);
    const service = find("Service", "tbench-server");
    for (const [k, v] of Object.entries(service.spec.selector)) assert.equal(pod.metadata.labels[k], v);
    const named = new Set(container.ports.map((p: { name: string }) => p.name));
    for (const port of service.spec.ports) assert.ok(named.has(port.targetPort), port.targetPort);
  });

  it("tbench runs as an Indexed Job, every pod at once, each writing its own --json to the shared claim", () => {
    const job = find("Job", "tbench");
    assert.equal(job.spec.completionMode, "Indexed");
    assert.equal(job.spec.parallelism, job.spec.completions);
    const args = job.spec.template.spec.containers[0].args.join(" ");
    assert.match(args, /-u tbench-server:8000 /);
    assert.match(args, /--json \/results\/tbench-\$\{JOB_COMPLETION_INDEX\}\.json/);
    const merge = find("Job", "tbench-merge").spec.template.spec.containers[0].args.join(" ");
    assert.match(merge, /tbench merge \/results\/tbench-\*\.json -o \/results\/merged\.json/);
    for (const name of ["tbench", "tbench-merge"]) {
      const claim = find("Job", name).spec.template.spec.volumes[0].persistentVolumeClaim.claimName;
      assert.equal(find("PersistentVolumeClaim", claim).spec.accessModes[0], "ReadWriteMany");
    }
  });

  it("refuses a manifest that breaks the schema (the check can fail)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tbench-k8s-"));
    try {
      const broken = join(dir, "job.yaml");
      await writeFile(
        broken,
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completions: four\n" +
          "  template: {spec: {containers: [{name: a, image: b}]}}\n",
      );
      assert.throws(() => validateManifest(broken), /completions must be integer/);
      await writeFile(broken, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n");
      assert.throws(() => validateManifest(broken), /expected one of .*, got v1\/Pod/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
