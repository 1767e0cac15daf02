// The baselines of the client benchmarks: raw undici carrying exactly what the client puts on the wire,
// captured through the client's `dispatcher` option. Two ways: `Pool.request()` reading the body, and
// `Pool.dispatch()` with a handler that only waits for the end (the floor under any undici-based client,
// and so the strongest baseline).
import { type Dispatcher, Pool } from "undici";
import { createHttpClient, type InferenceClient } from "../src/index.js";

/** A call that resolves when the whole answer has arrived. */
export type Call = () => Promise<unknown>;

/** What the client put on the wire for one call. */
export async function captureRequest(
  url: string,
  send: (c: InferenceClient) => Promise<unknown>,
): Promise<Dispatcher.DispatchOptions> {
  const pool = new Pool(url, { connections: 1 });
  let captured: Dispatcher.DispatchOptions | undefined;
  const spy = {
    dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
      captured ??= options;
      return pool.dispatch(options, handler);
    },
  } as unknown as Dispatcher;
  const client = createHttpClient({ url, maxRetries: 0, dispatcher: spy });
  await send(client);
  await client.close();
  await pool.close();
  if (captured === undefined) throw new Error("nothing was dispatched");
  return captured;
}

/** The captured call as options both raw contenders send. */
export function rawOptions(url: string, wire: Dispatcher.DispatchOptions): Dispatcher.DispatchOptions {
  return {
    origin: url,
    method: wire.method,
    path: wire.path,
    headers: wire.headers as Record<string, string>,
    ...(wire.body !== undefined && wire.body !== null ? { body: wire.body as Buffer } : {}),
  };
}

/** `Pool.dispatch` with a minimal handler (undici's original handler API): resolves with the status. */
export function rawDispatch(pool: Pool, options: Dispatcher.DispatchOptions): Call {
  return () =>
    new Promise<number>((resolve, reject) => {
      let status = 0;
      pool.dispatch(options, {
        onConnect() {},
        onHeaders(statusCode: number) {
          status = statusCode;
          return true;
        },
        onData() {
          return true;
        },
        onComplete() {
          if (status !== 200) reject(new Error(`raw dispatch: HTTP ${status}`));
          else resolve(status);
        },
        onError: reject,
      });
    });
}

/** `Pool.request`, the body read whole (`dump()` when it is not wanted). */
export function rawRequest(pool: Pool, options: Dispatcher.DispatchOptions, readBody: boolean): Call {
  const requestOptions = options as Dispatcher.RequestOptions;
  return async () => {
    const res = await pool.request(requestOptions);
    const bytes = readBody ? await res.body.arrayBuffer() : await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`raw request: HTTP ${res.statusCode}`);
    return bytes;
  };
}
