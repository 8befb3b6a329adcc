export {
  type ExplainedSource,
  type ExplainResult,
  type Explanation,
  explainWorkload,
} from './explain.js';
export { type ManifestParse, type Manifests, parseManifests } from './manifests.js';
export {
  type ChangedSource,
  type Plan,
  type PlanOptions,
  planChanges,
  planExitCode,
  type Verdict,
  type WorkloadPlan,
} from './plan.js';
export type {
  ClusterEvent,
  DryRunTouch,
  ExplainCluster,
  NamespaceMetadata,
  PlanCluster,
  Read,
} from './ports.js';
export {
  type DataFormat,
  renderExplanation,
  renderExplanationData,
  renderPlan,
  renderPlanData,
} from './render.js';
