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
  DryRunTouch,
  ExplainCluster,
  NamespaceMetadata,
  PlanCluster,
  Read,
} from './ports.js';
export {
  renderExplanation,
  renderExplanationData,
  renderPlan,
  renderPlanData,
} from './render.js';
