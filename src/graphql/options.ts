import type { GraphQLError } from "graphql";
import type { Authentication } from "../auth/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import type { DirectoryClient, DirectorySchema } from "../directory/index.ts";
import type { Logger } from "../logger.ts";
import type { LogPosition } from "../store/index.ts";
import type { EngineDeps } from "../workflow/index.ts";
import type { DirectoryWrite, WriteNote } from "./context.ts";
import type { ProjectionSource } from "./gateway/projection-reads.ts";
import type { Gateway } from "./gateway/schema.ts";

/** What the GraphQL channel is built from: the database, the directory, the configuration. */
export interface GraphqlPluginOptions {
  readonly pool: Pool;
  /** Who the caller is; without credentials, every request is UNAUTHENTICATED. */
  readonly authentication: Authentication;
  /** The directory; without one, fields that read or write it fail with SERVICE_UNAVAILABLE. */
  readonly directory: DirectoryClient | undefined;
  /** The directory's schema, when read: values AD's tools show as text are read as such. */
  readonly schema?: DirectorySchema | undefined;
  readonly config: AnnalConfig;
  readonly log: Logger;
  /**
   * Called after each directory write a mutation makes, before its answer is sent: the place
   * to capture the change and wait until the projections show it, at most `timeoutMs`
   * (`[graphql] readYourWritesTimeout`); it answers the log position they reached. A
   * `ProjectionTimeoutError` makes the rest of the request read the directory.
   */
  readonly afterWrite?: (write: DirectoryWrite, timeoutMs: number) => Promise<LogPosition | void>;
  /**
   * What capture records, for reading it from the projections (`[graphql] reads`); without
   * it every read goes to the directory.
   */
  readonly projection?: ProjectionSource;
  /**
   * Called just before each directory write (e.g. to note the write's cause so that capture
   * links the change to it). If it throws, the write is not made and the mutation fails. The
   * note it answers is withdrawn when the directory refuses the write.
   */
  readonly beforeWrite?: (write: DirectoryWrite) => Promise<WriteNote | void>;
  /** The workflow engine the workflow fields command; without it they answer 503's code. */
  readonly workflows?: EngineDeps;
  /** A gateway built beforehand (`buildGateway`); built from `config` when left out. */
  readonly gateway?: Gateway;
  /** The route. Default `/graphql`. */
  readonly path?: string;
}

/** What the context of a document run reads of its request. */
export interface ContextRequest {
  readonly id: string;
  readonly headers: { readonly "accept-language"?: string | undefined };
  readonly log: unknown;
}

/** What a document's run answers: its data and its errors. */
export interface Payload {
  readonly data?: unknown;
  readonly errors?: readonly GraphQLError[];
}
