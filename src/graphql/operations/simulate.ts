import { assertAccess } from "../../auth/index.ts";
import {
  loadDefinitionSource,
  readPeriod,
  readPolicy,
  simulateWorkflow,
} from "../../simulate/index.ts";
import type { GatewayContext } from "../context.ts";
import { engineOf } from "./engine.ts";

/**
 * `Query.simulateWorkflow`, for operators: `annal simulate`'s report (the same module), for
 * a definition given as its source, over the engine's own database (read only: the
 * simulation runs in a scratch database).
 */
export async function simulate(context: GatewayContext, args: Record<string, unknown>) {
  assertAccess(context.viewer, "operator");
  const engine = engineOf(context);
  const text = (name: string) => (typeof args[name] === "string" ? args[name] : undefined);
  const policy = readPolicy(text("dialogs"), text("fallback"));
  const period = readPeriod(text("from"), text("to"), context.clock());
  const simulated = await loadDefinitionSource(text("source") ?? "");
  const startsOf = text("startsOf");
  return simulateWorkflow({
    pool: engine.pool,
    simulated,
    period,
    ...policy,
    ...(startsOf === undefined ? {} : { startsOf }),
    base: engine.bindings.directory?.base ?? "",
    ...(engine.calendars ? { calendars: engine.calendars } : {}),
    log: context.log,
    fromParameter: "from",
  });
}
