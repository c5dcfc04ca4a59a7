/**
 * The demo's scenarios: the change events `annal refresh <scenario>` sends to the demo's
 * hooks (ops/demo/hooks/), each as its source system would, so that a tutorial can drive the
 * joiner and the leaver from the terminal. One scenario is one change event for one person.
 *
 * A tutorial's order: `hire` (a joiner starts and asks IT for a laptop), `ticket-done` (IT
 * answers the laptop ticket: the joiner completes), `leave` (a leaver disables the account),
 * `rehire` (HR hires the leaver again: the leaver restores the account), `transfer` (a person
 * moves to another department: HR's hook sets their department and manager).
 */

/** What a scenario's change event is made from. */
export interface ScenarioInput {
  /** The person: their login (uid). */
  readonly uid: string;
  /** The source system's id of this change, new for every run (a resend is harmless). */
  readonly id: string;
  /** When it happened in the source system (now). */
  readonly at: string;
  /** The key of the joiner's laptop ticket (`ticket-done`, `ticket-rejected`). */
  readonly ticketKey?: string;
}

export interface Scenario {
  readonly name: string;
  /** What it sends and what follows, in a line. */
  readonly description: string;
  /** The webhook it posts to: `POST /-hooks/<hook>/<webhook>`. */
  readonly hook: string;
  readonly webhook: string;
  /** The person it is about when `--uid` names none. */
  readonly defaultUid: string;
  /** What it needs from the running annal before it can be sent. */
  readonly needs?: "ticketKey";
  body(input: ScenarioInput): unknown;
}

/** The person the tutorial hires, lets go and hires again: not in the demo directory before. */
export const NEWCOMER = {
  uid: "alovelace",
  givenName: "Ada",
  sn: "Lovelace",
  mail: "alovelace@example.org",
  title: "Software Engineer",
  department: "engineering",
} as const;

const hired = (input: ScenarioInput) => ({
  id: input.id,
  kind: "employee.hired",
  at: input.at,
  employee:
    input.uid === NEWCOMER.uid
      ? NEWCOMER
      : {
          ...NEWCOMER,
          uid: input.uid,
          givenName: input.uid,
          sn: "Newcomer",
          mail: `${input.uid}@example.org`,
        },
});

const ticket = (status: "done" | "rejected") => (input: ScenarioInput) => ({
  id: input.id,
  key: input.ticketKey,
  status,
  ...(status === "done" ? { asset: "LT-0001" } : { comment: "no laptop in stock" }),
  at: input.at,
});

/** Who `transfer` moves when `--uid` names no one, and where: an engineer, to Support. */
export const TRANSFER = { uid: "hivanova", department: "support" } as const;

/** Every scenario, in the order a tutorial runs them. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: "hire",
    description:
      "HR hires a person (employee.hired): the joiner creates their entry, adds the department's groups and asks IT for a laptop",
    hook: "hr",
    webhook: "employees",
    defaultUid: NEWCOMER.uid,
    body: hired,
  },
  {
    name: "ticket-done",
    description:
      "IT hands over the laptop the joiner of --uid asked for (the ticket's update, done): the joiner completes",
    hook: "tickets",
    webhook: "updates",
    defaultUid: NEWCOMER.uid,
    needs: "ticketKey",
    body: ticket("done"),
  },
  {
    name: "ticket-rejected",
    description:
      "IT rejects the laptop ticket of the joiner of --uid: the joiner completes without a laptop",
    hook: "tickets",
    webhook: "updates",
    defaultUid: NEWCOMER.uid,
    needs: "ticketKey",
    body: ticket("rejected"),
  },
  {
    name: "leave",
    description:
      "HR says a person left (employee.left): the leaver disables the account and removes the memberships",
    hook: "hr",
    webhook: "employees",
    defaultUid: NEWCOMER.uid,
    body: (input) => ({
      id: input.id,
      kind: "employee.left",
      at: input.at,
      employee: { uid: input.uid },
    }),
  },
  {
    name: "rehire",
    description:
      "HR hires a leaver again (employee.hired for the same uid): the leaver restores the account",
    hook: "hr",
    webhook: "employees",
    defaultUid: NEWCOMER.uid,
    body: hired,
  },
  {
    name: "transfer",
    description: `HR moves a person to ${TRANSFER.department} (employee.transferred): the hook sets their department (ou) and their manager, the department's head`,
    hook: "hr",
    webhook: "employees",
    defaultUid: TRANSFER.uid,
    body: (input) => ({
      id: input.id,
      kind: "employee.transferred",
      at: input.at,
      employee: { uid: input.uid, department: TRANSFER.department },
    }),
  },
  {
    name: "promote",
    description:
      "HR changes a person's title (employee.updated): the hook sets it in the directory",
    hook: "hr",
    webhook: "employees",
    defaultUid: "prossi",
    body: (input) => ({
      id: input.id,
      kind: "employee.updated",
      at: input.at,
      employee: { uid: input.uid, title: "Chief Technology Officer" },
    }),
  },
];

/** The scenario named `name`, or undefined. */
export function scenarioNamed(name: string): Scenario | undefined {
  return SCENARIOS.find((scenario) => scenario.name === name);
}
