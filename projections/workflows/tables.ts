import { liveTable } from "../../src/projector/index.ts";

export const WORKFLOWS_PROJECTION = "workflows";

/** The live tables of the `workflows` projection, quoted and schema-qualified. */
export const WORKFLOW_INSTANCES = liveTable(WORKFLOWS_PROJECTION, "workflow_instances");
export const WORKFLOW_STEPS = liveTable(WORKFLOWS_PROJECTION, "workflow_steps");
export const DIALOGS = liveTable(WORKFLOWS_PROJECTION, "dialogs");

/** A row of `workflow_instances`: one instance as its events leave it. */
export interface WorkflowInstanceRow {
  readonly instance_id: string;
  readonly definition: string;
  readonly version: number;
  readonly hash: string;
  readonly status: string;
  readonly started_by_id: string;
  readonly started_by: string;
  readonly started_at: Date;
  readonly updated_at: Date;
  readonly until: Date | null;
  readonly parent_id: string | null;
  readonly parameters: unknown;
  readonly result: unknown;
  readonly error: unknown;
  /** The whole folded state (see `stateToJson`), which the next batch folds on from. */
  readonly state: unknown;
  readonly position: number;
  readonly transaction_id: string;
}

/** A row of `workflow_steps`: one call of an instance's code (a step, dialog, request, child). */
export interface WorkflowStepRow {
  readonly instance_id: string;
  readonly seq: number;
  readonly kind: string;
  readonly name: string;
  readonly state: string;
  readonly attempts: number | null;
  readonly started_at: Date;
  readonly ended_at: Date | null;
  readonly result: unknown;
  readonly error: unknown;
  /** A child's instance. */
  readonly child_id: string | null;
}

/** A row of `dialogs`: the inbox. `assignees` are canonical (normalised DNs, `account:<id>`). */
export interface DialogRow {
  readonly dialog_id: string;
  readonly instance_id: string;
  readonly seq: number;
  readonly workflow: string;
  readonly name: string;
  readonly assignees: string[];
  readonly state: string;
  readonly form: unknown;
  readonly data: unknown;
  readonly until: Date | null;
  readonly answer: unknown;
  readonly answered_by: unknown;
  readonly opened_at: Date;
  readonly ended_at: Date | null;
  /** Its escalation chain and where it stands (`DialogEscalation`), or null. */
  readonly escalation: unknown;
}

export const workflowTables = (table: (name: string) => string): readonly string[] => [
  `CREATE TABLE ${table("workflow_instances")} (
     instance_id uuid PRIMARY KEY,
     definition text NOT NULL,
     version integer NOT NULL,
     hash text NOT NULL,
     status text NOT NULL,
     started_by_id text NOT NULL,
     started_by text NOT NULL,
     started_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL,
     until timestamptz,
     parent_id uuid,
     parameters jsonb NOT NULL,
     result jsonb,
     error jsonb,
     state jsonb NOT NULL,
     position bigint NOT NULL,
     transaction_id xid8 NOT NULL)`,
  `CREATE INDEX ON ${table("workflow_instances")} (status, started_at DESC, instance_id)`,
  `CREATE INDEX ON ${table("workflow_instances")} (definition, started_at DESC, instance_id)`,
  `CREATE INDEX ON ${table("workflow_instances")} (started_by_id, started_at DESC, instance_id)`,
  `CREATE INDEX ON ${table("workflow_instances")} (started_at DESC, instance_id)`,
  `CREATE INDEX ON ${table("workflow_instances")} (parent_id)`,
  `CREATE TABLE ${table("workflow_steps")} (
     instance_id uuid NOT NULL,
     seq integer NOT NULL,
     kind text NOT NULL,
     name text NOT NULL,
     state text NOT NULL,
     attempts integer,
     started_at timestamptz NOT NULL,
     ended_at timestamptz,
     result jsonb,
     error jsonb,
     child_id uuid,
     PRIMARY KEY (instance_id, seq))`,
  `CREATE TABLE ${table("dialogs")} (
     dialog_id text PRIMARY KEY,
     instance_id uuid NOT NULL,
     seq integer NOT NULL,
     workflow text NOT NULL,
     name text NOT NULL,
     assignees text[] NOT NULL,
     state text NOT NULL,
     form jsonb,
     data jsonb,
     until timestamptz,
     answer jsonb,
     answered_by jsonb,
     opened_at timestamptz NOT NULL,
     ended_at timestamptz,
     escalation jsonb)`,
  `CREATE INDEX ON ${table("dialogs")} USING gin (assignees) WHERE state = 'pending'`,
  `CREATE INDEX ON ${table("dialogs")} (instance_id, seq)`,
];
