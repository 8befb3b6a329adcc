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
export type { ClusterEvent, DryRunTouch, ExplainCluster, PlanCluster, Read } from './ports.js';
export { renderPlan, renderPlanJson } from './render.js';
