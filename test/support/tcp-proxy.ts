import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy in front of a directory, so a test can cut every connection (as a
 * restarted server or a firewall would) or stop forwarding (as a hung server would).
 */
export interface TcpProxy {
  readonly url: string;
  /** Destroys every open connection, both sides. */
  killConnections(): void;
  /** While frozen, connections stay open but nothing is forwarded. */
  freeze(): void;
  thaw(): void;
  readonly connectionCount: number;
  /** Every byte clients sent through the proxy so far, to look for what went on the wire. */
  sentByClients(): Buffer;
  /** Every byte the directory sent back through the proxy so far. */
  sentByServer(): Buffer;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const pairs = new Set<[Socket, Socket]>();
  let frozen = false;
  let connections = 0;
  const sent: Buffer[] = [];
  const received: Buffer[] = [];
  const server: Server = createServer((client) => {
    connections++;
    const upstream = connect(Number(port), hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const forward = (from: Socket, to: Socket): void => {
      from.on("data", (chunk) => {
        if (!frozen) to.write(chunk);
      });
    };
    client.on("data", (chunk: Buffer) => sent.push(chunk));
    upstream.on("data", (chunk: Buffer) => {
      if (!frozen) received.push(chunk);
    });
    forward(client, upstream);
    forward(upstream, client);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) {
      socket.on("error", end);
      socket.on("close", end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");
  return {
    url: `ldap://127.0.0.1:${address.port}`,
    killConnections: () => {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
    },
    freeze: () => (frozen = true),
    thaw: () => (frozen = false),
    get connectionCount() {
      return connections;
    },
    sentByClients: () => Buffer.concat(sent),
    sentByServer: () => Buffer.concat(received),
    close: () =>
      new Promise<void>((resolve) => {
        for (const [client, upstream] of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
