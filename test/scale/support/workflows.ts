import { isDeepStrictEqual } from "node:util";
import { setTimeout as pause } from "node:timers/promises";
import type { Pool } from "../../../src/db/index.ts";
import { graphqlRequest, loop, type Figures, type LoadTarget } from "./load.ts";

/**
 * The scale suite's workflow: a step that fails on its first `failures` attempts and is
 * retried, a dialog the suite's token answers (as an approver would, from its inbox), then a
 * step that sums up. What the code implies for each instance: COMPLETED with `{ n, approved,
 * flakyAttempt }`, the dialog answered once with the instance's own `n`, the flaky step failed
 * `failures` times before it completed (an attempt cut short by a SIGKILL counts as one).
 */
export const SCALE_WORKFLOW = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "scale",
  version: 1,
  parameters: z.object({ n: z.number().int(), failures: z.number().int().min(0).max(3) }),
  async run(flow, { n, failures }) {
    const flaky = await flow.step(
      "flaky",
      async ({ attempt }) => {
        if (attempt <= failures) throw new Error("attempt " + attempt + " fails by design");
        return attempt;
      },
      { retry: { maxAttempts: 8, initialDelay: "200ms", maxDelay: "1s" } },
    );
    const { answer } = await flow.dialog({
      name: "approve",
      assignees: ["service:scale"],
      schema: z.object({ approved: z.boolean(), n: z.number().int() }),
      data: { n },
    });
    flow.assert(answer.n === n, "the answer names another instance's n");
    return await flow.step("sum-up", async () => ({ n, approved: answer.approved, flakyAttempt: flaky }));
  },
});
`;

/** The failures the instance started with `n` is told to have: 0 to 3, cycling. */
export const failuresOf = (n: number) => n % 4;

/** What the workflow clients saw acknowledged. */
export interface WorkflowsAcknowledged {
  /** `n` of each instance whose start was answered (with its instance id). */
  readonly started: Map<number, string>;
  /** Dialog ids a `completeDialog` was answered for. */
  readonly answered: Set<string>;
}

const START = `mutation($p: JSON!, $key: String!) {
  startWorkflow(name: "scale", parameters: $p, startKey: $key) { id } }`;
const INBOX = `{ myDialogs(first: 50) { nodes { id data } } }`;
const ANSWER = `mutation($id: ID!, $answer: JSON!) { completeDialog(id: $id, answer: $answer) { id } }`;

/**
 * The approver's next request: reads the token's inbox when it has nothing left to answer,
 * else answers the next dialog it read (skipping those answered already: the inbox is a
 * projection and may still show them). One request a call, so that its failures and pauses
 * are counted as the other clients' are.
 */
export async function answerNext(
  target: LoadTarget,
  acknowledged: WorkflowsAcknowledged,
  queue: { id: string; n: number }[],
): Promise<{ ok: boolean; status: number; code: string; idle: boolean }> {
  const next = queue[0];
  if (next === undefined) {
    const inbox = await graphqlRequest(target, INBOX);
    if (inbox.ok) {
      const { nodes } = inbox.body.data!.myDialogs as {
        nodes: { id: string; data: { n: number } }[];
      };
      for (const { id, data } of nodes) {
        if (!acknowledged.answered.has(id)) queue.push({ id, n: data.n });
      }
    }
    return { ...inbox, idle: queue.length === 0 };
  }
  const outcome = await graphqlRequest(target, ANSWER, {
    id: next.id,
    answer: { approved: true, n: next.n },
  });
  // Answered, or refused for good (WF_CONFLICT: answered already): either way it is done.
  if (outcome.ok || outcome.code === "WF_CONFLICT") queue.shift();
  if (outcome.ok) acknowledged.answered.add(next.id);
  return { ...outcome, idle: false };
}

/** Answers everything in the inbox now (after the load, for the instances still waiting). */
export async function answerInbox(
  target: LoadTarget,
  acknowledged: WorkflowsAcknowledged,
): Promise<void> {
  const queue: { id: string; n: number }[] = [];
  for (let i = 0; i < 200; i++) {
    const outcome = await answerNext(target, acknowledged, queue);
    if (!outcome.ok || outcome.idle) return;
  }
}

/**
 * Two clients: a starter (one instance about every 400 ms, each with a start key, so a start
 * whose answer was lost is sent again with the same key and starts nothing new) and an
 * approver (polls its inbox and answers what it finds).
 */
export function runWorkflowLoad(
  target: LoadTarget,
  stop: AbortSignal,
  figures: Figures,
  acknowledged: WorkflowsAcknowledged,
): Promise<void> {
  let n = 0;
  const starter = async () => {
    const outcome = await graphqlRequest(target, START, {
      p: { n, failures: failuresOf(n) },
      key: `scale-${n}`,
    });
    if (outcome.ok) {
      acknowledged.started.set(n, (outcome.body.data!.startWorkflow as { id: string }).id);
      n++;
      await pause(400, undefined, { signal: stop }).catch(() => {});
    }
    return outcome;
  };
  const queue: { id: string; n: number }[] = [];
  const approver = async () => {
    const outcome = await answerNext(target, acknowledged, queue);
    if (outcome.idle) await pause(300, undefined, { signal: stop }).catch(() => {});
    return outcome;
  };
  return Promise.all([
    loop("workflow-start", figures, stop, starter),
    loop("dialog-answer", figures, stop, approver),
  ]).then(() => {});
}

/** One instance of the scale workflow as the log tells it. */
interface InstanceRecord {
  readonly id: string;
  readonly n: number;
  readonly status: string | undefined;
  readonly result: unknown;
  readonly dialogsOpened: number;
  readonly dialogsCompleted: number;
  readonly flakyAttempts: { attempt: number; outcome: string | undefined }[];
}

/** Every instance of the scale workflow, from its stream in the log. */
export async function instancesInLog(pool: Pool): Promise<InstanceRecord[]> {
  const { rows } = await pool.query<{
    id: string;
    n: number;
    status: string | null;
    result: unknown;
    opened: number;
    completed: number;
    flaky: { attempt: number; outcome: string | null }[] | null;
  }>(
    `WITH started AS (
       SELECT stream_id, data->>'instanceId' AS id, (data->'parameters'->>'n')::int AS n
         FROM events WHERE type = 'WorkflowStarted' AND data->'definition'->>'name' = 'scale')
     SELECT s.id, s.n,
       (SELECT e.type FROM events e WHERE e.stream_id = s.stream_id
          AND e.type IN ('WorkflowCompleted', 'WorkflowErrored', 'WorkflowCancelled')
          ORDER BY e.stream_version DESC LIMIT 1) AS status,
       (SELECT e.data->'result' FROM events e WHERE e.stream_id = s.stream_id
          AND e.type = 'WorkflowCompleted' LIMIT 1) AS result,
       (SELECT count(*)::int FROM events e WHERE e.stream_id = s.stream_id
          AND e.type = 'DialogOpened') AS opened,
       (SELECT count(*)::int FROM events e WHERE e.stream_id = s.stream_id
          AND e.type = 'DialogCompleted') AS completed,
       (SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'outcome', (
            SELECT o.type FROM events o WHERE o.stream_id = s.stream_id
               AND o.type IN ('StepCompleted', 'StepFailed')
               AND o.data->>'name' = 'flaky' AND (o.data->>'attempt')::int = a.attempt
             LIMIT 1)) ORDER BY a.attempt)
          FROM (SELECT (e.data->>'attempt')::int AS attempt FROM events e
                 WHERE e.stream_id = s.stream_id AND e.type = 'StepScheduled'
                   AND e.data->>'name' = 'flaky') a) AS flaky
       FROM started s ORDER BY s.n`,
  );
  return rows.map((r) => ({
    id: r.id,
    n: r.n,
    status: r.status ?? undefined,
    result: r.result,
    dialogsOpened: r.opened,
    dialogsCompleted: r.completed,
    flakyAttempts: (r.flaky ?? []).map((a) => ({
      attempt: a.attempt,
      outcome: a.outcome ?? undefined,
    })),
  }));
}

/**
 * What is wrong with an instance against what its code implies (nothing: undefined). The
 * flaky step fails on attempts 1..failures and completes on the next; an attempt with no
 * outcome was cut short by a killed worker and was tried again under the next number.
 */
export function wrongWith(instance: InstanceRecord): string | undefined {
  const failures = failuresOf(instance.n);
  const attempts = instance.flakyAttempts;
  const last = attempts.at(-1);
  const expected = (attempt: number) =>
    attempt === last?.attempt
      ? ["StepCompleted"]
      : attempt <= failures
        ? ["StepFailed", undefined]
        : [undefined];
  const problems = [
    instance.status !== "WorkflowCompleted" && `ended ${instance.status ?? "not yet"}`,
    instance.dialogsOpened !== 1 && `opened ${instance.dialogsOpened} dialogs`,
    instance.dialogsCompleted !== 1 && `its dialog was answered ${instance.dialogsCompleted} times`,
    attempts.some((a, i) => a.attempt !== i + 1) && "the flaky step's attempts are not 1, 2, ...",
    (last === undefined || last.attempt <= failures) &&
      `the flaky step completed at attempt ${last?.attempt}, not after ${failures} failures`,
    attempts.some((a) => !expected(a.attempt).includes(a.outcome)) &&
      `the flaky step's attempts went ${JSON.stringify(attempts)} for ${failures} failures`,
    !isDeepStrictEqual(instance.result, {
      n: instance.n,
      approved: true,
      flakyAttempt: last?.attempt,
    }) && `its result is ${JSON.stringify(instance.result)}`,
  ].filter((problem) => problem !== false);
  return problems.length === 0 ? undefined : `instance ${instance.n}: ${problems.join("; ")}`;
}

/** How many attempts of the flaky steps failed, and how many a killed worker cut short. */
export function retryFigures(instances: readonly InstanceRecord[]) {
  const attempts = instances.flatMap((i) => i.flakyAttempts);
  return {
    failedAndRetried: attempts.filter((a) => a.outcome === "StepFailed").length,
    cutShortByKill: attempts.filter((a) => a.outcome === undefined).length,
  };
}
