/**
 * The gRPC implementation of InferenceClient, over @grpc/grpc-js with @tbench/proto's generated messages:
 * the same calls, results and error classes as the HTTP client (so code switches transport by changing
 * the factory), plus ModelStreamInfer streams (grpc-stream.ts). One Channel per client (grpc-channel.ts)
 * carries every call; infer sends inputs in `raw_input_contents` and reads outputs as views of the answer.
 */
import { grpcInferenceServiceMethods, type inference, type ModelConfig } from "@tbench/proto";
import { InvalidArgumentError } from "../errors.js";
import type { InferResult } from "../infer-result.js";
import type {
  CallOptions,
  LoadModelOptions,
  PreparedInfer,
  RepositoryIndexOptions,
  UnloadModelOptions,
} from "../inference-client.js";
import type {
  LogSettings,
  LogSettingsUpdate,
  ModelMetadata,
  ModelStatistics,
  RepositoryIndexEntry,
  ServerMetadata,
  SharedMemoryRegion,
  SharedMemoryRegionStatus,
  TraceSettings,
  TraceSettingsUpdate,
} from "../result-types.js";
import type { InferRequest } from "../tensor-types.js";
import { GrpcChannel, type UnarySpec } from "./grpc-channel.js";
import { type GrpcClientOptions, resolveGrpcClientOptions } from "./grpc-client-options.js";
import { decodeGrpcInferResponse, encodeGrpcInferRequest } from "./grpc-infer-codec.js";
import type { GrpcInferenceClient, InferStream, StreamOptions } from "./grpc-inference-client.js";
import {
  decodeAnswer,
  logSettingsOf,
  logSettingsRequest,
  modelConfigOf,
  modelMetadataOf,
  modelStatisticsOf,
  repositoryIndexOf,
  serverMetadataOf,
  sharedMemoryStatusOf,
  traceSettingsOf,
  traceSettingsRequest,
} from "./grpc-results.js";
import { GrpcInferStream } from "./grpc-stream.js";

const M = grpcInferenceServiceMethods;
type MethodName = keyof typeof M;

interface Encoder<T> {
  encode(message: T): { finish(): Uint8Array };
}

function encode<T>(type: Encoder<T>, message: T): Buffer {
  const bytes = type.encode(message).finish();
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** An infer request encoded once (id included), sent as often as asked. */
class PreparedGrpcInfer implements PreparedInfer {
  readonly model: string;
  readonly byteLength: number;
  readonly #client: GrpcClient;
  readonly #body: Buffer;
  readonly #spec: UnarySpec;

  constructor(client: GrpcClient, model: string, request: InferRequest) {
    this.#client = client;
    this.model = model;
    this.#body = encodeGrpcInferRequest(model, request);
    this.byteLength = this.#body.length;
    this.#spec = client.inferSpec(model, request.id);
  }

  send(options?: CallOptions): Promise<InferResult> {
    return this.#client.sendInfer(this.#spec, this.#body, options);
  }
}

class GrpcClient implements GrpcInferenceClient {
  readonly #channel: GrpcChannel;
  readonly #specs = new Map<string, UnarySpec>();

  constructor(channel: GrpcChannel) {
    this.#channel = channel;
  }

  // ---- plumbing ------------------------------------------------------------------------------------

  #spec(method: MethodName, idempotent: boolean): UnarySpec {
    let spec = this.#specs.get(method);
    if (spec === undefined) {
      spec = {
        path: M[method].path,
        what: method,
        idempotent,
        maxRetries: this.#channel.options.maxRetries,
      };
      this.#specs.set(method, spec);
    }
    return spec;
  }

  /** A non-infer call: encodes `message`, makes the call, decodes the answer. */
  async #call<Req, Res>(
    method: MethodName,
    message: Req,
    options: CallOptions | undefined,
    idempotent: boolean,
  ): Promise<Res> {
    const m = M[method] as unknown as {
      requestType: Encoder<Req>;
      responseType: { decode(b: Uint8Array): Res };
    };
    const bytes = await this.#channel.unary(
      this.#spec(method, idempotent),
      encode(m.requestType, message),
      options,
    );
    return decodeAnswer(method, m.responseType, bytes);
  }

  /** How infer calls for `model` are made (retries only when opted in). */
  inferSpec(model: string, requestId: string | undefined): UnarySpec {
    const o = this.#channel.options;
    return {
      path: M.ModelInfer.path,
      what: `ModelInfer ${model}`,
      idempotent: true, // retried at all only when the caller opted in
      maxRetries: o.retryInfer ? o.maxRetries : 0,
      requestId,
    };
  }

  sendInfer(spec: UnarySpec, body: Buffer, options: CallOptions | undefined): Promise<InferResult> {
    return this.#channel.unary(spec, body, options).then(decodeGrpcInferResponse);
  }

  // ---- infer ---------------------------------------------------------------------------------------

  infer(model: string, request: InferRequest, options?: CallOptions): Promise<InferResult> {
    let body: Buffer;
    try {
      body = encodeGrpcInferRequest(model, request);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.sendInfer(this.inferSpec(model, request.id), body, options);
  }

  prepareInfer(model: string, request: InferRequest): PreparedInfer {
    return new PreparedGrpcInfer(this, model, request);
  }

  stream(model: string, options?: StreamOptions): InferStream {
    return new GrpcInferStream(this.#channel, model, options);
  }

  // ---- health and metadata -------------------------------------------------------------------------

  async isServerLive(options?: CallOptions): Promise<boolean> {
    const r = await this.#call<object, inference.ServerLiveResponse>("ServerLive", {}, options, true);
    return r.live === true;
  }

  async isServerReady(options?: CallOptions): Promise<boolean> {
    const r = await this.#call<object, inference.ServerReadyResponse>("ServerReady", {}, options, true);
    return r.ready === true;
  }

  async isModelReady(model: string, version?: string, options?: CallOptions): Promise<boolean> {
    const r = await this.#call<inference.ModelReadyRequest.$Properties, inference.ModelReadyResponse>(
      "ModelReady",
      { name: model, version: version ?? "" },
      options,
      true,
    );
    return r.ready === true;
  }

  async serverMetadata(options?: CallOptions): Promise<ServerMetadata> {
    return serverMetadataOf(await this.#call("ServerMetadata", {}, options, true));
  }

  async modelMetadata(model: string, version?: string, options?: CallOptions): Promise<ModelMetadata> {
    return modelMetadataOf(
      await this.#call("ModelMetadata", { name: model, version: version ?? "" }, options, true),
    );
  }

  async modelConfig(model: string, version?: string, options?: CallOptions): Promise<ModelConfig> {
    return modelConfigOf(
      await this.#call("ModelConfig", { name: model, version: version ?? "" }, options, true),
    );
  }

  // ---- repository ----------------------------------------------------------------------------------

  async repositoryIndex(
    request?: RepositoryIndexOptions,
    options?: CallOptions,
  ): Promise<readonly RepositoryIndexEntry[]> {
    return repositoryIndexOf(
      await this.#call("RepositoryIndex", { ready: request?.readyOnly ?? false }, options, true),
    );
  }

  async loadModel(model: string, request?: LoadModelOptions, options?: CallOptions): Promise<void> {
    const parameters: Record<string, inference.ModelRepositoryParameter.$Properties> = {};
    if (request?.config !== undefined) {
      parameters["config"] = {
        string_param: typeof request.config === "string" ? request.config : JSON.stringify(request.config),
      };
    }
    if (request?.files !== undefined) {
      if (request.config === undefined) {
        throw new InvalidArgumentError(
          "loadModel: `files` requires `config` (the override model's configuration)",
        );
      }
      for (const [name, content] of Object.entries(request.files)) {
        if (!name.startsWith("file:")) {
          throw new InvalidArgumentError(
            `loadModel: file path ${JSON.stringify(name)} must start with "file:", e.g. "file:1/model.onnx"`,
          );
        }
        parameters[name] = { bytes_param: content };
      }
    }
    await this.#call("RepositoryModelLoad", { model_name: model, parameters }, options, false);
  }

  async unloadModel(model: string, request?: UnloadModelOptions, options?: CallOptions): Promise<void> {
    const parameters = { unload_dependents: { bool_param: request?.unloadDependents ?? false } };
    await this.#call("RepositoryModelUnload", { model_name: model, parameters }, options, false);
  }

  async modelStatistics(
    model?: string,
    version?: string,
    options?: CallOptions,
  ): Promise<readonly ModelStatistics[]> {
    if (model === undefined && version !== undefined) {
      throw new InvalidArgumentError(
        `modelStatistics: version ${JSON.stringify(version)} given without a model`,
      );
    }
    return modelStatisticsOf(
      await this.#call("ModelStatistics", { name: model ?? "", version: version ?? "" }, options, true),
    );
  }

  // ---- trace and log settings ----------------------------------------------------------------------

  async traceSettings(model?: string, options?: CallOptions): Promise<TraceSettings> {
    const r = await this.#call<inference.TraceSettingRequest.$Properties, inference.TraceSettingResponse>(
      "TraceSetting",
      { model_name: model ?? "" },
      options,
      true,
    );
    return traceSettingsOf(r);
  }

  async updateTraceSettings(
    settings: TraceSettingsUpdate,
    model?: string,
    options?: CallOptions,
  ): Promise<TraceSettings> {
    const r = await this.#call<inference.TraceSettingRequest.$Properties, inference.TraceSettingResponse>(
      "TraceSetting",
      { model_name: model ?? "", settings: traceSettingsRequest(settings) },
      options,
      false,
    );
    return traceSettingsOf(r);
  }

  async logSettings(options?: CallOptions): Promise<LogSettings> {
    const r = await this.#call<inference.LogSettingsRequest.$Properties, inference.LogSettingsResponse>(
      "LogSettings",
      {},
      options,
      true,
    );
    return logSettingsOf(r);
  }

  async updateLogSettings(settings: LogSettingsUpdate, options?: CallOptions): Promise<LogSettings> {
    const r = await this.#call<inference.LogSettingsRequest.$Properties, inference.LogSettingsResponse>(
      "LogSettings",
      { settings: logSettingsRequest(settings) },
      options,
      false,
    );
    return logSettingsOf(r);
  }

  // ---- system shared memory ------------------------------------------------------------------------

  async systemSharedMemoryStatus(
    region?: string,
    options?: CallOptions,
  ): Promise<readonly SharedMemoryRegionStatus[]> {
    return sharedMemoryStatusOf(
      await this.#call("SystemSharedMemoryStatus", { name: region ?? "" }, options, true),
    );
  }

  async systemSharedMemoryRegister(
    name: string,
    region: SharedMemoryRegion,
    options?: CallOptions,
  ): Promise<void> {
    const message = { name, key: region.key, offset: region.offset ?? 0, byte_size: region.byteSize };
    await this.#call("SystemSharedMemoryRegister", message, options, false);
  }

  async systemSharedMemoryUnregister(name?: string, options?: CallOptions): Promise<void> {
    await this.#call("SystemSharedMemoryUnregister", { name: name ?? "" }, options, false);
  }

  // ---- lifetime ------------------------------------------------------------------------------------

  close(): Promise<void> {
    return this.#channel.close();
  }

  destroy(error?: Error): Promise<void> {
    return this.#channel.destroy(error);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Creates a gRPC client for a KServe v2 / Triton server (Triton's GRPCInferenceService, port 8001 by
 * default). Options are validated here, once (a bad option throws InvalidArgumentError); the client owns
 * one grpc-js channel until `close()`.
 *
 * @example
 * ```ts
 * await using client = createGrpcClient({ url: "localhost:8001" });
 * const result = await client.infer("simple", { inputs: [...] });
 * ```
 */
export function createGrpcClient(options: GrpcClientOptions): GrpcInferenceClient {
  return new GrpcClient(new GrpcChannel(resolveGrpcClientOptions(options)));
}
