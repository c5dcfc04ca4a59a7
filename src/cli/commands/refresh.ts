/** `annal refresh <scenario>`: sends a demo scenario's change event and waits for its outcome. */
import { openDatabase } from "../../app/index.ts";
import type { Queryable } from "../../db/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { createLogger } from "../../logger.ts";
import { SCENARIOS, scenarioNamed } from "../../starter/index.ts";
import { durationMs } from "../../time/index.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { REFRESH } from "../scenario-usages.ts";
import { signInAs } from "../scenarios/as-person.ts";
import { graphqlRequest } from "../scenarios/graphql-request.ts";
import { runningAnnal } from "../scenarios/running-annal.ts";
import { postChangeEvent, waitProcessed, webhookSecret } from "../scenarios/send.ts";
import { pendingTicketKey } from "../scenarios/ticket-key.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

const DEFAULT_TIMEOUT = "60s";

export const command: CommandModule = {
  run(args, output) {
    const { values, positionals } = parseCommandLine(args, REFRESH);
    return refresh({ scenario: positionals[0]!, ...values }, output);
  },
};

export interface RefreshOptions {
  readonly scenario: string;
  readonly uid?: string;
  readonly as?: string;
  readonly timeout?: string;
  readonly url?: string;
  readonly config?: string;
}

/**
 * Sends scenario `scenario`'s change event to the running annal, signed with its webhook's
 * secret, waits until it is processed (progress on standard error) and prints what it
 * started or answered: `<scenario> <uid>: <source>/<eventId> processed: <workflow> <instance>`.
 *
 * @throws AnnalError `ANNAL_UNKNOWN_SCENARIO` listing the scenarios; `ANNAL_NOT_RUNNING`;
 *   `ANNAL_WEBHOOK_SECRET_MISSING`; `ANNAL_WEBHOOK_REJECTED`; `ANNAL_SOURCE_CHANGE_FAILED`;
 *   `ANNAL_SOURCE_CHANGE_TIMEOUT`; with `--as`, `ANNAL_UNKNOWN_FIXTURE_ACCOUNT` and
 *   `ANNAL_LOGIN_FAILED`.
 */
export async function refresh(options: RefreshOptions, output: Output): Promise<number> {
  const scenario = scenarioNamed(options.scenario);
  if (scenario === undefined) {
    throw new AnnalError(
      "ANNAL_UNKNOWN_SCENARIO",
      `no scenario ${options.scenario}; the scenarios are ${SCENARIOS.map((s) => s.name).join(", ")}`,
    );
  }
  const timeoutText = options.timeout ?? DEFAULT_TIMEOUT;
  const timeoutMs = durationMs(timeoutText);
  if (timeoutMs === undefined) {
    throw new UsageError(`--timeout ${timeoutText}: expected a duration such as 60s or 2m`);
  }
  const annal = await runningAnnal(options);
  // Signed in first: a wrong --as is said before anything is sent.
  const asPerson = options.as === undefined ? undefined : await signInAs(annal.url, options.as);
  const secret = await webhookSecret(annal.config.hooks?.dir, scenario.hook, scenario.webhook);
  const uid = options.uid ?? scenario.defaultUid;
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(annal.config, log);
  try {
    const deadline = Date.now() + timeoutMs;
    const ticketKey =
      scenario.needs === "ticketKey"
        ? await waitForTicket(database.pool, uid, deadline, output)
        : undefined;
    const at = new Date().toISOString();
    const body = scenario.body({
      uid,
      id: `refresh-${scenario.name}-${uid}-${Date.now()}`,
      at,
      ...(ticketKey === undefined ? {} : { ticketKey }),
    });
    const accepted = await postChangeEvent(annal.url, scenario, secret, body);
    for (const event of accepted) {
      const name = `${event.source}/${event.eventId}`;
      output.err(`${scenario.name} ${uid}: ${name} accepted, waiting for it to be processed`);
      const processed = await waitProcessed(
        database.pool,
        event,
        Math.max(0, deadline - Date.now()),
        (state) => {
          if (state.state === "retrying") {
            const why = state.error
              ? `: ${state.error.code ?? "ERROR"}: ${state.error.message}`
              : "";
            output.err(`${name}: attempt ${state.attempt} failed, retrying${why}`);
          }
        },
      );
      const started = startedBy(processed.result);
      output.out(
        `${scenario.name} ${uid}: ${name} processed${started ? `: ${started.workflow ?? "instance"} ${started.instanceId}${started.what ? ` (${started.what})` : ""}` : directoryOutcome(processed.result)}`,
      );
      if (asPerson && started) {
        const answer = await graphqlRequest(
          annal.url,
          "query($id: ID!) { instance(id: $id) { id workflow state } }",
          { id: started.instanceId },
          asPerson,
        );
        const instance = (answer.data as { instance: { workflow: string; state: string } | null })
          .instance;
        output.out(
          `  as ${options.as}: ${instance ? `${instance.workflow} ${started.instanceId} ${instance.state}` : "not visible"}`,
        );
      }
    }
    return 0;
  } finally {
    await database.close();
  }
}

/** What a demo hook's result says it started or answered. */
function startedBy(
  result: unknown,
): { workflow?: string; instanceId: string; what?: string } | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  const r = result as Record<string, unknown>;
  if (typeof r.instanceId !== "string") return undefined;
  const what =
    r.rehired === true
      ? "rehired"
      : r.started === false
        ? "already running"
        : r.answered === true
          ? "answered"
          : r.started === true || r.workflow === "joiner"
            ? "started"
            : undefined;
  return {
    instanceId: r.instanceId,
    ...(typeof r.workflow === "string" ? { workflow: r.workflow } : {}),
    ...(what === undefined ? {} : { what }),
  };
}

/**
 * What a demo hook's result says it wrote in the directory itself (`promote`, `transfer`):
 * `: transferred uid=…, department support, manager uid=…`, or nothing.
 */
function directoryOutcome(result: unknown): string {
  if (typeof result !== "object" || result === null) return "";
  const r = result as Record<string, unknown>;
  if (typeof r.directory !== "string" || typeof r.dn !== "string") return "";
  const details = ["department", "manager"]
    .filter((key) => typeof r[key] === "string")
    .map((key) => `, ${key} ${String(r[key])}`)
    .join("");
  return `: ${r.directory} ${r.dn}${details}`;
}

/** Waits (bounded) until the joiner of `uid` has asked IT for its laptop. */
async function waitForTicket(
  db: Queryable,
  uid: string,
  deadline: number,
  output: Output,
): Promise<string> {
  let said = false;
  for (;;) {
    const key = await pendingTicketKey(db, uid);
    if (typeof key === "string") return key;
    if (key === null || Date.now() >= deadline) {
      throw new AnnalError(
        "ANNAL_SOURCE_CHANGE_FAILED",
        `no joiner of ${uid} waits for a laptop ticket`,
        { hint: `annal refresh hire --uid ${uid} starts one` },
      );
    }
    if (!said) output.err(`waiting for the joiner of ${uid} to ask for its laptop`);
    said = true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
