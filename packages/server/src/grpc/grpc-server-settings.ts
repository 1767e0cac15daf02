/**
 * The gRPC endpoint's settings under Triton's names and defaults (server src/grpc/grpc_server.h
 * KeepAliveOptions, src/command_line_parser.cc), and how they become @grpc/grpc-js server options.
 *
 * grpc-js's server honours keepalive time and timeout and the connection age and grace; it has no ping
 * policy (Node's http2 answers every client ping, so no ping is ever a strike and no GOAWAY is sent for
 * pings, as Triton with --grpc-http2-max-ping-strikes 0), sends its own keepalive pings whether or not
 * calls are open, and never compresses what it sends (server-interceptors.ts writes the compressed flag 0).
 * Those settings are accepted, passed under gRPC core's channel argument names, and have no effect; the
 * README lists them.
 */
import type { ChannelOptions } from "@grpc/grpc-js";

/** Triton's --grpc-infer-response-compression-level values. */
export const GRPC_COMPRESSION_LEVELS = ["none", "low", "medium", "high"] as const;
export type GrpcCompressionLevel = (typeof GRPC_COMPRESSION_LEVELS)[number];

/**
 * Default bound on one gRPC message each way, in bytes: 128 MiB. Triton sets INT32_MAX and has no flag;
 * unbounded, a 2 GiB message took the server from 0.7 to 4.8 GB before it was refused (issue 36). Twice
 * --http-max-input-size's 64 MiB so that a 64 MiB tensor (what the client and server tests send both
 * ways) still fits with its message around it; 8 such requests and their answers at once took the
 * server to about 2.3 GiB (docs/reliability.md).
 */
export const DEFAULT_GRPC_MAX_MESSAGE_BYTES = 128 * 1024 * 1024;

/** Settings of the gRPC endpoint (every field optional; Triton's default where absent). */
export interface GrpcServerSettings {
  /**
   * --grpc-max-receive-message-size: largest request message in bytes. grpc-js reads each message's
   * length prefix and answers RESOURCE_EXHAUSTED before buffering a larger one. Default 128 MiB.
   */
  readonly maxReceiveMessageBytes?: number;
  /** --grpc-max-send-message-size: largest response message in bytes (RESOURCE_EXHAUSTED). Default 128 MiB. */
  readonly maxSendMessageBytes?: number;
  /** --grpc-keepalive-time: ms between keepalive pings the server sends. Default 7200000 (2 hours). */
  readonly keepaliveTimeMs?: number;
  /** --grpc-keepalive-timeout: ms to wait for a ping's acknowledgement before closing. Default 20000. */
  readonly keepaliveTimeoutMs?: number;
  /** --grpc-keepalive-permit-without-calls. Default false. Not honoured by grpc-js (see above). */
  readonly keepalivePermitWithoutCalls?: boolean;
  /** --grpc-http2-max-pings-without-data. Default 2. Not honoured by grpc-js. */
  readonly http2MaxPingsWithoutData?: number;
  /** --grpc-http2-min-recv-ping-interval-without-data (ms). Default 300000. Not honoured by grpc-js. */
  readonly http2MinRecvPingIntervalWithoutDataMs?: number;
  /** --grpc-http2-max-ping-strikes. Default 2. Not honoured by grpc-js. */
  readonly http2MaxPingStrikes?: number;
  /** --grpc-max-connection-age (ms); 0 or absent: unlimited. */
  readonly maxConnectionAgeMs?: number;
  /** --grpc-max-connection-age-grace (ms); 0 or absent: unlimited. */
  readonly maxConnectionAgeGraceMs?: number;
  /** --grpc-infer-response-compression-level. Default none. Not honoured by grpc-js (responses go uncompressed). */
  readonly inferResponseCompressionLevel?: GrpcCompressionLevel;
}

/** Triton's defaults (KeepAliveOptions), and ours for the message sizes. */
export const GRPC_SETTING_DEFAULTS = Object.freeze({
  maxReceiveMessageBytes: DEFAULT_GRPC_MAX_MESSAGE_BYTES,
  maxSendMessageBytes: DEFAULT_GRPC_MAX_MESSAGE_BYTES,
  keepaliveTimeMs: 7_200_000,
  keepaliveTimeoutMs: 20_000,
  keepalivePermitWithoutCalls: false,
  http2MaxPingsWithoutData: 2,
  http2MinRecvPingIntervalWithoutDataMs: 300_000,
  http2MaxPingStrikes: 2,
  maxConnectionAgeMs: 0,
  maxConnectionAgeGraceMs: 0,
  inferResponseCompressionLevel: "none",
} as const satisfies Required<GrpcServerSettings>);

/** The grpc-js server options for `settings`, under gRPC core's channel argument names. */
export function grpcChannelOptions(settings: GrpcServerSettings): ChannelOptions {
  const s = { ...GRPC_SETTING_DEFAULTS, ...settings };
  const options: ChannelOptions = {
    "grpc.max_receive_message_length": s.maxReceiveMessageBytes,
    "grpc.max_send_message_length": s.maxSendMessageBytes,
    "grpc.keepalive_time_ms": s.keepaliveTimeMs,
    "grpc.keepalive_timeout_ms": s.keepaliveTimeoutMs,
    // Read by gRPC core, not by grpc-js's server: passed so the options say what was asked.
    "grpc.keepalive_permit_without_calls": s.keepalivePermitWithoutCalls ? 1 : 0,
    "grpc.http2.max_pings_without_data": s.http2MaxPingsWithoutData,
    "grpc.http2.min_ping_interval_without_data_ms": s.http2MinRecvPingIntervalWithoutDataMs,
    "grpc.http2.max_ping_strikes": s.http2MaxPingStrikes,
  };
  // Triton sets the age arguments only when non-zero (grpc_server.cc).
  if (s.maxConnectionAgeMs > 0) options["grpc.max_connection_age_ms"] = s.maxConnectionAgeMs;
  if (s.maxConnectionAgeGraceMs > 0) options["grpc.max_connection_age_grace_ms"] = s.maxConnectionAgeGraceMs;
  return options;
}

/** The settings grpc-js accepts but does not act on, named by their flags, when set away from Triton's default. */
export function ignoredGrpcSettings(settings: GrpcServerSettings): string[] {
  const ignored: string[] = [];
  const check = (key: keyof GrpcServerSettings, flag: string) => {
    const value = settings[key];
    if (value !== undefined && value !== GRPC_SETTING_DEFAULTS[key]) ignored.push(`${flag} ${String(value)}`);
  };
  check("keepalivePermitWithoutCalls", "--grpc-keepalive-permit-without-calls");
  check("http2MaxPingsWithoutData", "--grpc-http2-max-pings-without-data");
  check("http2MinRecvPingIntervalWithoutDataMs", "--grpc-http2-min-recv-ping-interval-without-data");
  check("http2MaxPingStrikes", "--grpc-http2-max-ping-strikes");
  check("inferResponseCompressionLevel", "--grpc-infer-response-compression-level");
  return ignored;
}
