export * from './annotations.js';
export {
  findWorkloadKind,
  findWorkloadKindByName,
  type GroupVersionKind,
  HANDLED_KINDS,
  type WorkloadKind,
} from './kinds.js';
export {
  annotationsAt,
  isObject,
  type JsonObject,
  lastWriteTime,
  objectAt,
  podTemplateOf,
  readWorkload,
  templateAnnotations,
  type Workload,
  workloadAnnotations,
} from './object.js';
export { rolloutHeld } from './rollout-held.js';
export {
  isWindowOpen,
  nextWindowOpening,
  parseRolloutWindow,
  type RolloutWindow,
} from './rollout-window.js';
export { findSources, type SourceDiscovery } from './sources.js';
export { deepEqual, templatesEqualIgnoringOurs } from './template.js';
