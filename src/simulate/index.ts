/**
 * What would it have done: a new or changed workflow definition run over a past period's
 * starts (`annal simulate`, GraphQL's `simulateWorkflow`), and an Access Configuration
 * compared with the one active at a moment (`annal simulate access`). Nothing a simulation
 * does reaches the directory or the live log. See `docs/simulation.md`.
 */
export {
  loadDefinitionFile,
  loadDefinitionSource,
  type SimulatedDefinition,
} from "./definition-file.ts";
export { readPeriod, simulationMoment, type Period } from "./period.ts";
export {
  DIALOG_FALLBACKS,
  DIALOG_POLICIES,
  readPolicy,
  type DialogFallback,
  type DialogPolicy,
} from "./policy.ts";
export { simulateWorkflow, type WorkflowSimulationOptions } from "./workflow.ts";
export { reportLines, type InstanceComparison, type SimulationReport } from "./report.ts";
export type { DirectoryWrite } from "./writes.ts";
export {
  enactPast,
  type Enacted,
  type EnactedEvent,
  type EnactOptions,
  type PastDialogAnswer,
  type PastStartPlan,
} from "./enact.ts";
export {
  enactPastReviews,
  type EnactedReviews,
  type EnactedStepWrite,
  type PastCampaignPlan,
  type PastHistory,
  type PastReviewDecision,
  type ReviewEnactOptions,
} from "./enact-reviews.ts";
export {
  accessReportLines,
  loadAccessFile,
  simulateAccess,
  type AccessChange,
  type AccessSimulationReport,
  type RefusedCommand,
} from "./access.ts";
export {
  loadReviewFile,
  reviewSimulationLines,
  simulateReview,
  type ReviewSimulation,
} from "./review.ts";
