import type { Client } from "ldapts";
import { frameMessages, type MessageTap } from "./framing.ts";
import { entryTap } from "./search-entries.ts";
import { DirectoryError, directoryError, timeoutError, type DirectoryOperation } from "./errors.ts";
import type { DirectoryTransport } from "./transport.ts";

export interface PoolOptions {
  readonly url: string;
  /** How connections are opened: in the clear, `ldaps://` or StartTLS. */
  readonly transport: DirectoryTransport;
  readonly bindDN: string;
  readonly password: string;
  readonly size: number;
  readonly connectTimeoutMs: number;
}

interface Waiter {
  readonly operation: DirectoryOperation;
  resolve(client: Client): void;
  reject(error: Error): void;
}

/**
 * A fixed number of connections bound as annal's account, opened on demand. A connection that
 * fails or times out is discarded and its slot opened afresh when next needed; one that merely
 * dropped while idle is reconnected and bound again before its next use.
 */
export class ConnectionPool {
  private readonly options: PoolOptions;
  private readonly idle: Client[] = [];
  private readonly waiters: Waiter[] = [];
  private open = 0;
  private closed = false;

  constructor(options: PoolOptions) {
    this.options = options;
  }

  /** Waits for a connection; `timeoutMs` bounds the wait when every connection is busy. */
  acquire(operation: DirectoryOperation, timeoutMs: number): Promise<Client> {
    if (this.closed) return Promise.reject(this.closedError(operation));
    const client = this.idle.pop();
    if (client !== undefined) return Promise.resolve(client);
    if (this.open < this.options.size) {
      this.open++;
      return Promise.resolve(this.connect());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        operation,
        resolve: (c) => {
          clearTimeout(timer);
          resolve(c);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(timeoutError({ operation, url: this.options.url, timeoutMs }));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Binds the connection as annal's account unless it still is (it may have dropped). */
  async bind(client: Client): Promise<void> {
    if (client.isBound) return;
    const { transport, bindDN, password, url } = this.options;
    try {
      await client.bind(bindDN, password);
    } catch (error) {
      throw directoryError(error, { operation: "bind", url, bindDN, tls: transport.tls });
    }
  }

  /** Gives a healthy connection back. */
  release(client: Client): void {
    if (this.closed) {
      this.open--;
      void client.unbind().catch(() => {});
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(client);
    else this.idle.push(client);
  }

  /** Closes a connection that failed or may still carry a late answer; its slot is freed. */
  discard(client: Client): void {
    this.open--;
    void client.unbind().catch(() => {});
    const waiter = this.waiters.shift();
    if (waiter === undefined) return;
    this.open++;
    waiter.resolve(this.connect());
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(this.closedError(waiter.operation));
    const idle = this.idle.splice(0);
    this.open -= idle.length;
    await Promise.all(idle.map((client) => client.unbind().catch(() => {})));
  }

  /**
   * A connection of its own, outside the pool and not yet bound (`bind` binds it), whose
   * messages `tap` sees first: for a search that stays open. Its owner unbinds it.
   */
  own(tap: MessageTap): Client {
    const client = this.options.transport.client({
      connectTimeout: this.options.connectTimeoutMs,
    });
    return frameMessages(client, tap);
  }

  /** A new, not yet connected client: ldapts connects on the first bind. */
  private connect(): Client {
    // autoRebind: should ldapts reconnect on its own between our bind check and an operation,
    // it binds again instead of running the operation anonymously.
    const client = this.options.transport.client({
      connectTimeout: this.options.connectTimeoutMs,
      autoRebind: true,
    });
    return frameMessages(client, entryTap(client));
  }

  private closedError(operation: DirectoryOperation): DirectoryError {
    return new DirectoryError("ANNAL_LDAP_CLOSED", "the directory client was closed", {
      operation,
      status: 503,
      hint: "annal is shutting down; retry against a running instance",
    });
  }
}
