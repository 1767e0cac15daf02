/**
 * Binding a node:http server, shared by the API and metrics endpoints: a failed bind (port in use, bad
 * address) rejects instead of surfacing as an unhandled 'error' event, and the base URL brackets IPv6.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Where a server ended up listening; `port` is the real one when 0 was asked for. */
export interface ListeningAddress {
  readonly port: number;
  /** `http://host:port`, without a trailing slash. */
  readonly baseUrl: string;
}

/**
 * Starts `server` on `address`:`port`, or on `handle` (a socket already listening there) when given, and
 * resolves once it accepts connections.
 */
export async function listen(
  server: Server,
  port: number,
  address: string,
  handle?: object,
): Promise<ListeningAddress> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const listening = () => {
      server.off("error", reject);
      resolve();
    };
    if (handle === undefined) server.listen(port, address, listening);
    else server.listen(handle, listening);
  });
  const bound = (server.address() as AddressInfo).port;
  const host = address.includes(":") ? `[${address}]` : address;
  return { port: bound, baseUrl: `http://${host}:${bound}` };
}
