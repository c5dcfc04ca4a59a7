export { workflowsProjection } from "./projection.ts";
export {
  DIALOGS,
  WORKFLOW_INSTANCES,
  WORKFLOW_STEPS,
  WORKFLOWS_PROJECTION,
  type DialogRow,
  type WorkflowInstanceRow,
  type WorkflowStepRow,
} from "./tables.ts";
export {
  TERMINAL,
  canonicalPrincipal,
  foldInstance,
  pendingDialog,
  stateFromJson,
  stateToJson,
  type CallRecord,
  type DialogEscalation,
  type InstanceEvent,
  type InstanceState,
  type InstanceStatus,
} from "./fold.ts";
