export { type DoctorCheck, diagnose } from './doctor.js';
export {
  type Explanation,
  explainWorkload,
} from './explain-workload.js';
export { type Manifests, parseManifests } from './manifests.js';
export {
  type Plan,
  type PlanOptions,
  planChanges,
  planExitCode,
  type Verdict,
  type WorkloadPlan,
} from './plan-changes.js';
export type {
  ClusterEvent,
  DoctorCluster,
  DryRunTouch,
  ExplainCluster,
  FollowLeader,
  FoundWorkload,
  NamespaceMetadata,
  PlanCluster,
  Read,
  WebhookRegistration,
} from './ports.js';
export {
  renderExplanation,
  renderExplanationData,
  renderExplanationNames,
  renderPlan,
  renderPlanData,
  renderPlanNames,
} from './render.js';
