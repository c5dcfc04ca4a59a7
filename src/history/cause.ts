/**
 * Why an entry changed: the recorded event a captured change names as its cause
 * (`metadata.causationId`, set when annal made the write itself; see the capture module's
 * write intents). Changes made in the directory by anyone else have none.
 */
export type ChangeCause =
  | {
      /** A change event taken in by a webhook, whose provider made the write. */
      readonly kind: "changeEvent";
      /** The id of its `ChangeEventReceived` event. */
      readonly id: string;
      /** `<hook>/<webhook>`. */
      readonly webhook: string;
      /** The sending system and its own id of the change event. */
      readonly source: string;
      readonly eventId: string;
      /** Whom the change event was about (the sender's subject, e.g. an employee). */
      readonly subject: string;
    }
  | {
      /** A GraphQL mutation, made as `actor` for a service account. */
      readonly kind: "mutation";
      /** The id of its `DirectoryWriteRequested` event. */
      readonly id: string;
      readonly requestId: string;
      /** The account the mutation was made for. */
      readonly account: string;
    }
  | {
      /** A step of a workflow instance, made for the account it acted for (an approver). */
      readonly kind: "workflow";
      /** The id of the step's `StepScheduled` event. */
      readonly id: string;
      readonly instanceId: string;
      /** The definition's name. */
      readonly workflow: string;
      readonly step: string;
      readonly attempt: number;
      /** Whom the step acted for (`{ as }`): the person who approved, when there was one. */
      readonly approvedBy: {
        readonly accountId: string;
        readonly name: string;
        /** The DN the step's directory writes were made as. */
        readonly dn: string | null;
      } | null;
    }
  | {
      /** Any other recorded event (its type says what). */
      readonly kind: "event";
      readonly id: string;
      readonly type: string;
    };

/** The joined cause columns of a change row (all null when it has no recorded cause). */
export interface CauseRow {
  readonly cause_id: string | null;
  readonly cause_type: string | null;
  readonly cause_data: unknown;
}

/** `LEFT JOIN` of a change's cause event, for a changes table aliased `c`. */
export const CAUSE_JOIN = `LEFT JOIN events AS cause
  ON c.causation_id ~ '^[0-9a-fA-F-]{36}$' AND cause.id = c.causation_id::uuid`;
export const CAUSE_COLUMNS =
  "cause.id AS cause_id, cause.type AS cause_type, cause.data AS cause_data";

export function causeOf(row: CauseRow): ChangeCause | null {
  if (row.cause_id === null || row.cause_type === null) return null;
  const data = (row.cause_data ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  switch (row.cause_type) {
    case "ChangeEventReceived": {
      const envelope = (data.envelope ?? {}) as Record<string, unknown>;
      return {
        kind: "changeEvent",
        id: row.cause_id,
        webhook: `${text(data.hook)}/${text(data.webhook)}`,
        source: text(envelope.source),
        eventId: text(envelope.eventId),
        subject: text(envelope.subject),
      };
    }
    case "DirectoryWriteRequested": {
      const account = (data.account ?? {}) as Record<string, unknown>;
      return {
        kind: "mutation",
        id: row.cause_id,
        requestId: text(data.requestId),
        account: text(account.name),
      };
    }
    case "StepScheduled": {
      const actingFor = data.actingFor as {
        accountId?: unknown;
        name?: unknown;
        dn?: unknown;
      } | null;
      return {
        kind: "workflow",
        id: row.cause_id,
        instanceId: text(data.instanceId),
        workflow: text(data.workflow),
        step: text(data.name),
        attempt: typeof data.attempt === "number" ? data.attempt : 0,
        approvedBy: actingFor
          ? {
              accountId: text(actingFor.accountId),
              name: text(actingFor.name),
              dn: typeof actingFor.dn === "string" ? actingFor.dn : null,
            }
          : null,
      };
    }
    default:
      return { kind: "event", id: row.cause_id, type: row.cause_type };
  }
}
