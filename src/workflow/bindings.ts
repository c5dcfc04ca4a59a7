import type { Pool } from "../db/index.ts";
import { causedWrites } from "../capture/index.ts";
import type {
  DirectoryClient,
  DirectoryEntry,
  ModifyDNOptions,
  Modification,
  OperationOptions,
  ReadOptions,
  SearchOptions,
} from "../directory/index.ts";
import type { ActorRef } from "../events/index.ts";
import type { Logger } from "../logger.ts";
import { AnnalError } from "../errors/index.ts";

/**
 * A service a workflow's steps may call, declared in its definition by name (`bindings`) and
 * provided by the engine when a step runs: the directory, a configured REST backend, or one
 * of the workflow's own. A test replaces each with a fixture.
 */
export interface BindingDeclaration<S = unknown> {
  readonly kind: "directory" | "rest" | "service";
  /** `rest`: the name of a `[[graphql.rest]]` backend. */
  readonly backend?: string;
  /** `service`: makes the service for one step. */
  readonly create?: (context: BindingContext) => S | Promise<S>;
  /** Carries the service's type for `flow.step`'s context; never set. */
  readonly service?: S;
}

/** The services a definition's bindings give its steps, by name. */
export type ServicesOf<B> = {
  readonly [K in keyof B]: B[K] extends BindingDeclaration<infer S> ? S : never;
};

/** What a `service` binding is made with. */
export interface BindingContext {
  readonly instanceId: string;
  readonly log: Pick<Logger, "info" | "warn" | "error">;
}

/**
 * The directory as a step sees it. Its writes are made as the account the step acts for
 * (`{ as }` of the step), through proxied authorization, and each is noted first with the
 * step as its cause, so the change capture records names the instance, the step and the
 * person behind it.
 */
export interface WorkflowDirectory {
  readonly base: string;
  get(dn: string, options?: ReadOptions): Promise<DirectoryEntry | undefined>;
  search(base: string, options?: SearchOptions): AsyncIterable<readonly DirectoryEntry[]>;
  add(
    dn: string,
    attributes: Parameters<DirectoryClient["add"]>[1],
    options?: OperationOptions,
  ): Promise<void>;
  modify(dn: string, changes: readonly Modification[], options?: OperationOptions): Promise<void>;
  modifyDN(dn: string, newRDN: string, options?: ModifyDNOptions): Promise<void>;
  delete(dn: string, options?: OperationOptions): Promise<void>;
}

/**
 * A REST backend of `[[graphql.rest]]` as a step sees it: JSON requests to its base URL with
 * its configured headers, and `send` for `flow.request` (a POST of the payload with the
 * request's correlation key in the `Idempotency-Key` header and the body's `key`).
 */
export interface RestService {
  call(method: string, path: string, body?: unknown): Promise<unknown>;
  send(payload: unknown, request: { readonly key: string }): Promise<unknown>;
}

/** A service `flow.request` can send through: anything with `send(payload, { key })`. */
export interface RequestSender {
  send(payload: unknown, request: { readonly key: string; readonly instanceId: string }): unknown;
}

/**
 * Declares a binding.
 *
 * @example
 * bindings: {
 *   directory: bind.directory(),
 *   tickets: bind.rest("tickets"),
 *   clock: bind.service(() => ({ zone: "Europe/Berlin" })),
 * }
 */
export const bind = {
  directory: (): BindingDeclaration<WorkflowDirectory> => ({ kind: "directory" }),
  rest: (backend: string): BindingDeclaration<RestService> => ({ kind: "rest", backend }),
  service: <S>(create: (context: BindingContext) => S | Promise<S>): BindingDeclaration<S> => ({
    kind: "service",
    create,
  }),
};

/** The REST backends the engine knows (the configuration's `[[graphql.rest]]`). */
export interface RestBackendSettings {
  readonly name: string;
  readonly base: string;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
}

/** What the engine makes bindings from, for a process. */
export interface BindingSources {
  readonly pool: Pool;
  readonly directory?: {
    readonly client: DirectoryClient;
    readonly base: string;
    /** The DN annal binds as: the identity of a write made as no one in particular. */
    readonly boundAs: string;
  };
  readonly rest?: readonly RestBackendSettings[];
  /** Services by binding name that replace what the definitions declare (tests' fixtures). */
  readonly fixtures?: ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>>;
  /**
   * Fixtures only (the test driver): a binding without a fixture is not provided from the
   * declaration; this error says so instead.
   */
  readonly fixtureMissing?: (binding: string) => Error;
  /**
   * Replaces every binding, knowing the step it is made for (the simulator's recorders, which
   * note each call with its instance and step and never reach the service itself).
   */
  readonly replace?: (
    binding: string,
    declaration: BindingDeclaration,
    cause: StepCause,
  ) => unknown;
  readonly log: Pick<Logger, "info" | "warn" | "error">;
}

/** Why a step runs: the cause its directory writes are noted with. */
export interface StepCause {
  readonly instanceId: string;
  /** The id of the step's `StepScheduled` event. */
  readonly eventId: string;
  readonly actingFor: ActorRef | null;
}

/** The services of `declarations` for one step (or one request's send). */
export async function provideBindings(
  sources: BindingSources,
  declarations: Readonly<Record<string, BindingDeclaration>>,
  cause: StepCause,
): Promise<Record<string, unknown>> {
  const services: Record<string, unknown> = {};
  for (const [name, declaration] of Object.entries(declarations)) {
    const { fixtures } = sources;
    if (sources.replace) {
      services[name] = sources.replace(name, declaration, cause);
      continue;
    }
    if (fixtures instanceof Map ? fixtures.has(name) : fixtures && Object.hasOwn(fixtures, name)) {
      services[name] =
        fixtures instanceof Map ? fixtures.get(name) : (fixtures as Record<string, unknown>)[name];
      continue;
    }
    if (sources.fixtureMissing) throw sources.fixtureMissing(name);
    services[name] = await provide(sources, name, declaration, cause);
  }
  return services;
}

async function provide(
  sources: BindingSources,
  name: string,
  declaration: BindingDeclaration,
  cause: StepCause,
): Promise<unknown> {
  switch (declaration.kind) {
    case "directory": {
      if (!sources.directory) throw missing(name, "annal has no [directory]");
      return workflowDirectory(sources.pool, sources.directory, cause);
    }
    case "rest": {
      const backend = sources.rest?.find((candidate) => candidate.name === declaration.backend);
      if (!backend)
        throw missing(name, `no [[graphql.rest]] backend is named "${declaration.backend}"`);
      return restService(backend);
    }
    case "service":
      if (!declaration.create) throw missing(name, "it has nothing to create the service with");
      return declaration.create({ instanceId: cause.instanceId, log: sources.log });
  }
}

function missing(name: string, why: string): AnnalError {
  return new AnnalError("WF_BINDING_MISSING", `the binding "${name}" cannot be provided: ${why}`);
}

function workflowDirectory(
  pool: Pool,
  directory: NonNullable<BindingSources["directory"]>,
  cause: StepCause,
): WorkflowDirectory {
  const { client } = directory;
  const writes = causedWrites(client, {
    pool,
    boundAs: directory.boundAs,
    cause: { causationId: cause.eventId, correlationId: cause.instanceId },
  });
  // Writes are made as the account the step acts for, unless the step names another `as`.
  const as = <O extends OperationOptions>(options: O | undefined): O => {
    const dn = cause.actingFor?.dn;
    return (options?.as !== undefined || !dn ? (options ?? {}) : { ...options, as: dn }) as O;
  };
  return {
    base: directory.base,
    get: (dn, options) => client.get(dn, options),
    search: (base, options) => client.search(base, options),
    add: (dn, attributes, options) => writes.add(dn, attributes, as(options)),
    modify: (dn, changes, options) => writes.modify(dn, changes, as(options)),
    modifyDN: (dn, newRDN, options) => writes.modifyDN(dn, newRDN, as(options)),
    delete: (dn, options) => writes.delete(dn, as(options)),
  };
}

function restService(backend: RestBackendSettings): RestService {
  const headers = (extra: Record<string, string> = {}) => {
    const result = new Headers();
    for (const [key, value] of Object.entries(backend.headers)) {
      for (const one of Array.isArray(value) ? value : [value]) result.append(key, String(one));
    }
    result.set("accept", "application/json");
    for (const [key, value] of Object.entries(extra)) result.set(key, value);
    return result;
  };
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    extra?: Record<string, string>,
  ) => {
    const url = new URL(
      path.replace(/^\//, ""),
      backend.base.endsWith("/") ? backend.base : `${backend.base}/`,
    );
    const response = await fetch(url, {
      method,
      headers: headers(
        body === undefined ? extra : { "content-type": "application/json", ...extra },
      ),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (!response.ok) {
      throw new AnnalError(
        "ANNAL_REST_BACKEND_FAILED",
        `the REST backend "${backend.name}" answered ${response.status}: ${text.slice(0, 200)}`,
        { details: { backend: backend.name, status: response.status } },
      );
    }
    if (text === "") return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };
  return {
    call: (method, path, body) => call(method.toUpperCase(), path, body),
    send: (payload, request) =>
      call("POST", "", { key: request.key, payload }, { "idempotency-key": request.key }),
  };
}
