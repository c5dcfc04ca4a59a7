import type { FastifyInstance } from "fastify";
import { callerOf, type Authentication } from "../../auth/index.ts";
import { AnnalError } from "../../errors/index.ts";
import type { Jobs } from "../../jobs/index.ts";
import type { EventStore } from "../../store/index.ts";
import {
  FAILED_WORK_STATES,
  listFailedWork,
  retryFailedWork,
  type FailedWorkState,
} from "./failed-work.ts";
import type { HooksRegistry } from "../definition/registry.ts";

/**
 * `GET /api/failed-work[?state=failed,retrying,resolved|all][&limit=100]`: `{ items: [...] }`,
 * the most recent failure first. `POST /api/failed-work/<id>/retry`: `{ id, queued }`.
 * For the web application; errors are the server's problem details.
 */
export function failedWorkRoutes(options: {
  readonly registry: HooksRegistry;
  readonly store: EventStore;
  readonly jobs: Jobs;
  /** Failed work is for operators: every route needs the `operator` access function. */
  readonly authentication: Authentication;
}) {
  const guard = options.authentication.require("operator");
  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook("onRequest", guard);

    scope.get("/api/failed-work", async (request) => {
      const query = request.query as Record<string, unknown>;
      const items = await listFailedWork(options.store.pool, {
        states: parseStates(query.state),
        limit: parseLimit(query.limit),
      });
      return { items };
    });

    scope.post("/api/failed-work/:id/retry", async (request) => {
      const { id } = request.params as { id: string };
      return retryFailedWork(options, id, { requestedBy: callerOf(request).account.name });
    });
  };
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
