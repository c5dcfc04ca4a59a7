import { setTimeout as pause } from "node:timers/promises";
import type { DirectoryClient } from "../../src/directory/index.ts";
import type { LdifEntry } from "../../src/slapd/index.ts";

/**
 * The soak's steady load, each part paced to a rate so that the machine's speed changes how
 * long a request takes, never how many are made: directory changes made outside annal (a
 * `title` set to `soak-<n>`, the send time kept to measure capture's lag), REST reads (a
 * search by uid and a look-up by entryUUID), and workflow instances (started and answered
 * through GraphQL). Every part keeps going through failures, counted.
 */
export interface SoakWindow {
  writes: number;
  /** ms since the epoch at which `soak-<n>` was acknowledged by slapd. */
  readonly sent: Map<string, number>;
  readonly restMs: number[];
  restErrors: number;
  workflowErrors: number;
}

export const newWindow = (): SoakWindow => ({
  writes: 0,
  sent: new Map(),
  restMs: [],
  restErrors: 0,
  workflowErrors: 0,
});

export interface SoakTarget {
  readonly api: string;
  readonly token: string;
  readonly directory: DirectoryClient;
  readonly people: readonly LdifEntry[];
  /** Changes a second, REST reads a second, instances a minute. */
  readonly rates: { writes: number; reads: number; workflowsPerMinute: number };
}

/** A workflow that runs a step, waits for the soak's token to answer, and runs another. */
export const SOAK_WORKFLOW = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "soak",
  version: 1,
  parameters: z.object({ n: z.number().int() }),
  async run(flow, { n }) {
    await flow.step("prepare", async () => n);
    const { answer } = await flow.dialog({
      name: "approve",
      assignees: ["service:soak"],
      schema: z.object({ approved: z.boolean() }),
      data: { n },
    });
    return await flow.step("apply", async () => ({ n, approved: answer.approved }));
  },
});
`;

/** Runs `act` `perSecond` times a second until `stop`, on schedule (late ones go at once). */
async function paced(perSecond: number, stop: AbortSignal, act: (n: number) => Promise<void>) {
  if (perSecond <= 0) return;
  const began = Date.now();
  for (let n = 0; !stop.aborted; n++) {
    const due = began + (n * 1000) / perSecond;
    if (due > Date.now())
      await pause(due - Date.now(), undefined, { signal: stop }).catch(() => {});
    if (stop.aborted) return;
    await act(n);
  }
}

/** Starts the load; `window()` is the current window (the sampler swaps it). */
export function runSoakLoad(
  target: SoakTarget,
  stop: AbortSignal,
  window: () => SoakWindow,
): Promise<void> {
  const bearer = { authorization: `Bearer ${target.token}` };
  const person = (n: number) => target.people[(n * 7919) % target.people.length]!;
  const uidOf = (dn: string) => /^uid=([^,]+)/.exec(dn)![1]!;
  let written = 0;
  const writer = paced(target.rates.writes, stop, async () => {
    const title = `soak-${written++}`;
    try {
      await target.directory.modify(person(written).dn, [
        { operation: "replace", attribute: "title", values: title },
      ]);
      const now = window();
      now.writes++;
      now.sent.set(title, Date.now());
    } catch {
      // slapd's refusal is not capture's lag: the write is simply not counted
    }
  });
  const ids: string[] = [];
  const reader = paced(target.rates.reads, stop, async (n) => {
    const started = performance.now();
    try {
      const byId = n % 2 === 1 && ids.length > 0;
      const url = byId
        ? `${target.api}/api/entries/users/${ids[n % ids.length]}`
        : `${target.api}/api/entries/users?filter=${encodeURIComponent(`uid eq "${uidOf(person(n).dn)}"`)}&first=20`;
      const response = await fetch(url, { headers: bearer, signal: AbortSignal.timeout(30_000) });
      const body = (await response.json()) as { nodes?: { entryUUID?: string }[] };
      if (!response.ok) throw new Error(String(response.status));
      const found = body.nodes?.[0]?.entryUUID;
      if (found && ids.length < 1000) ids.push(found);
      window().restMs.push(performance.now() - started);
    } catch {
      window().restErrors++;
    }
  });
  const graphql = async (query: string, variables?: unknown) => {
    const response = await fetch(`${target.api}/graphql`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json", origin: target.api },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown };
    if (!response.ok || body.errors)
      throw new Error(JSON.stringify(body.errors ?? response.status));
    return body.data!;
  };
  const starter = paced(target.rates.workflowsPerMinute / 60, stop, async (n) => {
    await graphql(
      `
        mutation ($p: JSON!) {
          startWorkflow(name: "soak", parameters: $p) {
            id
          }
        }
      `,
      { p: { n } },
    ).catch(() => window().workflowErrors++);
  });
  const answered = new Set<string>();
  const approver = paced(0.5, stop, async () => {
    try {
      const inbox = await graphql(`
        {
          myDialogs(first: 50) {
            nodes {
              id
            }
          }
        }
      `);
      for (const { id } of (inbox.myDialogs as { nodes: { id: string }[] }).nodes) {
        if (answered.has(id)) continue;
        await graphql(
          `
            mutation ($id: ID!) {
              completeDialog(id: $id, answer: { approved: true }) {
                id
              }
            }
          `,
          { id },
        );
        answered.add(id);
      }
    } catch {
      window().workflowErrors++;
    }
  });
  return Promise.all([writer, reader, starter, approver]).then(() => {});
}
