import type { FastifyInstance, FastifyRequest } from "fastify";
import { AnnalError } from "../errors/index.ts";
import type { Jobs } from "../jobs/index.ts";
import type { EventStore } from "../store/index.ts";
import {
  FAILED_WORK_STATES,
  listFailedWork,
  retryFailedWork,
  type FailedWorkState,
} from "./failed-work.ts";
import type { HooksRegistry } from "./registry.ts";

/**
 * Whether a request may read or retry failed work. Resolve to a name to record as who asked
 * for a retry (`requestedBy`), `true` to allow without one, `false` to refuse with 403.
 */
export type AuthorizeRequest = (
  request: FastifyRequest,
) => boolean | string | Promise<boolean | string>;

const allowEveryone: AuthorizeRequest = () => true;

/**
 * `GET /api/failed-work[?state=failed,retrying,resolved|all][&limit=100]`: `{ items: [...] }`,
 * the most recent failure first. `POST /api/failed-work/<id>/retry`: `{ id, queued }`.
 * For the web application; errors are the server's problem details.
 */
export function failedWorkRoutes(options: {
  readonly registry: HooksRegistry;
  readonly store: EventStore;
  readonly jobs: Jobs;
  readonly authorize?: AuthorizeRequest;
}) {
  const authorize = options.authorize ?? allowEveryone;
  return async (scope: FastifyInstance): Promise<void> => {
    scope.get("/api/failed-work", async (request) => {
      await authorized(authorize, request);
      const query = request.query as Record<string, unknown>;
      const items = await listFailedWork(options.store.pool, {
        states: parseStates(query.state),
        limit: parseLimit(query.limit),
      });
      return { items };
    });

    scope.post("/api/failed-work/:id/retry", async (request) => {
      const who = await authorized(authorize, request);
      const { id } = request.params as { id: string };
      return retryFailedWork(options, id, {
        requestedBy: typeof who === "string" ? who : undefined,
      });
    });
  };
}

async function authorized(authorize: AuthorizeRequest, request: FastifyRequest) {
  const verdict = await authorize(request);
  if (verdict === false) {
    throw new AnnalError("ANNAL_FORBIDDEN", "this request may not see or retry failed work", {
      status: 403,
    });
  }
  return verdict;
}

function parseStates(value: unknown): readonly FailedWorkState[] | undefined {
  if (value === undefined) return undefined;
  if (value === "all") return FAILED_WORK_STATES;
  const states = typeof value === "string" ? value.split(",") : [];
  if (
    states.length === 0 ||
    !states.every((s) => (FAILED_WORK_STATES as readonly string[]).includes(s))
  ) {
    throw new AnnalError(
      "ANNAL_BAD_REQUEST",
      "state must list failed, retrying or resolved, or be all",
      {
        status: 400,
        hint: "e.g. ?state=failed,retrying or ?state=all",
      },
    );
  }
  return states as FailedWorkState[];
}

function parseLimit(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const limit = typeof value === "string" && /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= 1000)) {
    throw new AnnalError("ANNAL_BAD_REQUEST", "limit must be a whole number from 1 to 1000", {
      status: 400,
    });
  }
  return limit;
}
