/**
 * The demo's hooks file: an HR system posts employee changes to
 * `POST /-hooks/hr/employees`, signed with the secret in HR_WEBHOOK_SECRET (the demo falls
 * back to "demo-hr-secret"; a real hooks file writes "${HR_WEBHOOK_SECRET}" with no default).
 *
 * The provider notes each change in the event log, then:
 * - `employee.updated` sets the person's `title` (when annal has a directory). An employee the
 *   directory does not know is a permanent failure: it shows under failed work
 *   (`annal failed-work list`) and can be retried once the person exists.
 * - `employee.left` starts the leaver workflow (ops/demo/workflows/leaver.ts): the account is
 *   disabled and the memberships go at once, the entry 30 days later.
 * - `employee.hired` starts the joiner workflow (joiner.ts), or, when a leaver still waits for
 *   the same uid, ends that leaver instead: the person is rehired, their account restored.
 * - `employee.transferred` moves a person to another department: their `ou` names it and
 *   their `manager` is its head (or the manager HR names). The entry keeps its DN, so the
 *   groups that list it and the people who report to it still name it; memberships stay as
 *   they are (access follows a request, not a move).
 * Each start happens once per change event, however often HR sends it.
 *
 * Try it (annal running with the demo configuration):
 *
 *   export WEBHOOK_SECRET=demo-hr-secret
 *   npm run annal -- hooks send hr/employees --body '{"id":"hr-1","kind":"employee.updated",
 *     "at":"2026-11-22T08:30:00Z","employee":{"uid":"prossi","title":"Head of Research"}}'
 *
 *   npm run annal -- hooks send hr/employees --body '{"id":"hr-2","kind":"employee.hired",
 *     "at":"2026-11-22T08:30:00Z","employee":{"uid":"ada","givenName":"Ada","sn":"Lovelace",
 *     "mail":"ada@example.org","title":"Software Engineer","department":"Engineering"}}'
 *
 *   npm run annal -- hooks send hr/employees --body '{"id":"hr-3","kind":"employee.left",
 *     "at":"2026-11-22T08:30:00Z","employee":{"uid":"ada"}}'
 */
import { z } from "zod";
import {
  defineHooks,
  http,
  PermanentFailure,
  type HookDirectory,
  type HookWorkflows,
  type ProviderContext,
} from "annal";
import { latestFor, note } from "./_employees.ts";

/** uid is part of a DN: only letters a DN never needs escaped. */
const uid = z.string().regex(/^[a-z0-9._-]{1,64}$/);

/** A department: its ou under ou=people ("sales"; any case). */
const department = z.string().regex(/^[A-Za-z][A-Za-z0-9 ._-]{0,63}$/);

/** What a joiner needs: their entry is made from it. */
const newEmployee = z.object({
  uid,
  givenName: z.string().min(1).max(100),
  sn: z.string().min(1).max(100),
  cn: z.string().min(1).max(200).optional(),
  mail: z.email().max(200),
  title: z.string().min(1).max(200),
  department,
});

/** Where a person moves: a department, and their new manager's uid when not its head. */
const transfer = z.object({ uid, department, manager: uid.optional() });

const common = {
  /** The HR system's id of this change: resending it is harmless. */
  id: z.string().min(1).max(200),
  at: z.iso.datetime({ offset: true }),
};

const employeeChange = z.discriminatedUnion("kind", [
  z.object({
    ...common,
    kind: z.literal("employee.updated"),
    employee: z.object({ uid, title: z.string().min(1).max(200).optional() }),
  }),
  z.object({ ...common, kind: z.literal("employee.hired"), employee: newEmployee }),
  z.object({ ...common, kind: z.literal("employee.left"), employee: z.object({ uid }) }),
  z.object({ ...common, kind: z.literal("employee.transferred"), employee: transfer }),
]);

/** One change, or up to 100 at once: `{ "events": [ ... ] }`. */
const body = z.union([
  employeeChange,
  z.object({ events: z.array(employeeChange).min(1).max(100) }),
]);

/** What the provider finds in `envelope.data`: checked again, as stored events outlive code. */
const updatedData = z.object({ uid: z.string(), title: z.string().optional() });

export default defineHooks({
  name: "hr",
  webhooks: {
    employees: http.webhook({
      body,
      signature: {
        // The new secret first; during a rotation the old one in HR_WEBHOOK_SECRET_PREVIOUS.
        secrets: ["${HR_WEBHOOK_SECRET:-demo-hr-secret}", "${HR_WEBHOOK_SECRET_PREVIOUS:-}"],
      },
      maxClockSkew: "5m",
      limits: { bodyBytes: 256 * 1024, envelopes: 100 },
      rateLimit: { requests: 50, per: "1s" },
      map: (payload) =>
        ("events" in payload ? payload.events : [payload]).map((change) => ({
          source: "hr",
          eventId: change.id,
          type: change.kind,
          // Changes to one employee are processed one at a time, in the order HR sent them.
          subject: change.employee.uid,
          occurredAt: change.at,
          data: change.employee,
        })),
    }),
  },
  provider: {
    retry: { limit: 5, delay: "10s", maxDelay: "10m" },
    async process(envelope, context) {
      const employee = updatedData.parse(envelope.data);
      context.log.info({ uid: employee.uid, kind: envelope.type }, "HR change received");
      await context.record({
        type: "EmployeeChangeNoted",
        data: { uid: employee.uid, kind: envelope.type, title: employee.title ?? null },
      });
      switch (envelope.type) {
        case "employee.hired":
          return hired(newEmployee.parse(envelope.data), envelope.eventId, context);
        case "employee.left":
          return left(employee.uid, context);
        case "employee.transferred":
          return transferred(transfer.parse(envelope.data), context);
        default:
          return updated(employee, context);
      }
    },
  },
});

/** Sets the person's title: the demo's first provider, from before HR drove workflows. */
async function updated(employee: z.output<typeof updatedData>, context: ProviderContext) {
  const directory = context.directory;
  if (!directory || employee.title === undefined) return { directory: "unchanged" };
  const dn = await personDN(directory, employee.uid);
  // The write is recorded in ChangeEventProcessed (directoryWrites), caused by this change event.
  await directory.modify(dn, [
    { operation: "replace", attribute: "title", values: employee.title },
  ]);
  return { directory: "title set", dn };
}

/**
 * Moves a person to another department: `ou` and `manager` replaced, the old team
 * (`departmentNumber`, the old department's) removed. The same change again writes the same
 * values: harmless.
 */
async function transferred(move: z.output<typeof transfer>, context: ProviderContext) {
  const directory = context.directory;
  if (!directory) {
    throw new PermanentFailure("this annal has no directory to move people in", {
      code: "HR_NO_DIRECTORY",
    });
  }
  const dn = await personDN(directory, move.uid);
  const ou = await departmentOu(directory, move.department);
  const manager =
    move.manager === undefined
      ? await headOf(directory, ou)
      : await personDN(directory, move.manager);
  const entry = await directory.get(dn, { attributes: ["departmentNumber"] });
  const team = Object.keys(entry?.attributes ?? {}).some(
    (name) => name.toLowerCase() === "departmentnumber",
  );
  await directory.modify(dn, [
    { operation: "replace", attribute: "ou", values: ou },
    { operation: "replace", attribute: "manager", values: manager },
    ...(team ? [{ operation: "delete" as const, attribute: "departmentNumber" }] : []),
  ]);
  return { directory: "transferred", dn, department: ou, manager };
}

/** The DN of the one person with `uid`; a PermanentFailure for none or more. */
async function personDN(directory: HookDirectory, uid: string): Promise<string> {
  const found: string[] = [];
  for await (const page of directory.search(`ou=people,${directory.base}`, {
    filter: { op: "eq", attribute: "uid", value: uid },
    attributes: ["uid"],
    sizeLimit: 2,
  })) {
    found.push(...page.map((entry) => entry.dn));
  }
  if (found.length !== 1) {
    throw new PermanentFailure(
      found.length === 0
        ? `no person with uid ${uid} in the directory`
        : `more than one person has uid ${uid}`,
      { code: "HR_UNKNOWN_EMPLOYEE" },
    );
  }
  return found[0]!;
}

/** The department's ou as the directory spells it; a PermanentFailure when there is none. */
async function departmentOu(directory: HookDirectory, name: string): Promise<string> {
  for await (const page of directory.search(`ou=people,${directory.base}`, {
    scope: "one",
    filter: {
      op: "and",
      filters: [
        { op: "eq", attribute: "objectClass", value: "organizationalUnit" },
        { op: "eq", attribute: "ou", value: name },
      ],
    },
    attributes: ["ou"],
    sizeLimit: 1,
  })) {
    const ou = page[0]?.attributes.ou?.[0];
    if (ou !== undefined) return String(ou);
  }
  throw new PermanentFailure(`there is no department ${name} under ou=people`, {
    code: "HR_UNKNOWN_DEPARTMENT",
  });
}

/** A department's head: the owner of the department's group (`cn=<ou>,ou=groups`). */
async function headOf(directory: HookDirectory, ou: string): Promise<string> {
  const group = await directory.get(`cn=${ou},ou=groups,${directory.base}`, {
    attributes: ["owner"],
  });
  const owner = group?.attributes.owner?.[0];
  if (owner === undefined) {
    throw new PermanentFailure(`the department ${ou} has no head (its group has no owner)`, {
      code: "HR_NO_MANAGER",
    });
  }
  return String(owner);
}

/** Starts the leaver, unless one already runs for the uid (HR said it twice). */
async function left(uid: string, context: ProviderContext) {
  const workflows = engineOf(context);
  const latest = await latestFor(context, uid);
  if (latest?.type === "LeaverStarted") {
    return { workflow: "leaver", instanceId: latest.instanceId, started: false };
  }
  const { instanceId } = await startOrFail(() => workflows.start("leaver", { uid }));
  await note(context, { type: "LeaverStarted", uid, instanceId });
  return { workflow: "leaver", instanceId, started: true };
}

/**
 * A rehire ends the leaver that still waits for the uid (its request "hr": see leaver.ts);
 * anyone else is a joiner.
 */
async function hired(
  employee: z.output<typeof newEmployee>,
  eventId: string,
  context: ProviderContext,
) {
  const workflows = engineOf(context);
  const latest = await latestFor(context, employee.uid);
  if (latest?.type === "LeaverStarted") {
    const rehire = { rehired: true, eventId, department: employee.department };
    try {
      await workflows.answer({ instanceId: latest.instanceId, request: "hr" }, rehire);
      await note(context, {
        type: "LeaverRehired",
        uid: employee.uid,
        instanceId: latest.instanceId,
      });
      return { workflow: "leaver", instanceId: latest.instanceId, rehired: true };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // The leaver is still disabling the account and has not asked HR yet: try again later
      // (any error but a PermanentFailure is retried, with backoff).
      if (code === "WF_NOT_FOUND") {
        throw new Error(`the leaver ${latest.instanceId} of ${employee.uid} is not waiting yet`, {
          cause: error,
        });
      }
      // Over: its 30 days passed and the entry is gone. The person joins anew.
      if (code !== "WF_CONFLICT") throw error;
    }
  }
  const { instanceId } = await startOrFail(() => workflows.start("joiner", employee));
  await note(context, { type: "JoinerStarted", uid: employee.uid, instanceId });
  return { workflow: "joiner", instanceId };
}

function engineOf(context: ProviderContext): HookWorkflows {
  if (!context.workflows) {
    throw new PermanentFailure("this annal runs no workflow engine to hire or let go", {
      code: "HR_NO_WORKFLOWS",
    });
  }
  return context.workflows;
}

/**
 * A start refused for good (no such workflow deployed: annal runs without the demo's
 * `[workflows]`; parameters its schema refuses) is a permanent failure, under failed work;
 * anything else (a lock, the database) is retried.
 */
async function startOrFail<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "WF_NOT_FOUND" || code === "WF_VALIDATION") {
      throw new PermanentFailure((error as Error).message, { code, cause: error });
    }
    throw error;
  }
}
