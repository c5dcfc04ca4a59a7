/** The workflow module's read API: instances, steps, dialogs and the catalog as channels serve them. */
export { WorkflowReader, type CatalogEntryView, type InstanceEventView } from "./reader.ts";
export {
  type ActorView,
  type DeadlineView,
  type DialogView,
  type ErrorView,
  type EscalationLevelView,
  type EscalationView,
  type InstanceView,
  type Moment,
  type StepView,
} from "./views.ts";
