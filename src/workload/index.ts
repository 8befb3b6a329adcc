export * from './annotations.js';
export { podFailure, podSelectorOf, runsPods } from './canary-pods.js';
export {
  awaitingApprovalNote,
  FANOUT_AWAITS_APPROVAL,
  FANOUT_HALTED,
  fanoutHaltedNote,
  readAwaitingApprovalNote,
} from './fanout-note.js';
export {
  askFanout,
  FANOUT_CONTROL,
  FANOUT_STATE,
  type FanoutAction,
  type FanoutControl,
  type FanoutHold,
  type FanoutRecord,
  fanoutHoldOf,
  formatFanoutControl,
  formatFanoutRecord,
  type RecordedWorkload,
  readFanoutControl,
  readFanoutRecord,
  sameWorkload,
} from './fanout-record.js';
export { isFanoutLimitOff, isLargeFanout } from './fanout-size.js';
export { type FoundReference, findReferences, findSources } from './find-sources.js';
export {
  type Asker,
  decideHandled,
  excludedNamespaceSet,
  type Handled,
  isOptedOut,
  isWorkloadHandled,
  type NamespaceStanding,
  type NotHandledReason,
  namespaceStandingOf,
  standingOf,
} from './handled.js';
export {
  formatHashedVersions,
  readHashedVersions,
} from './hashed-versions.js';
export {
  EVERY_KNOWN_KIND,
  findWorkloadKind,
  findWorkloadKindByName,
  formatWorkload,
  type GroupVersionKind,
  HANDLED_KINDS,
  KIND_OPTION_FORMAT,
  KNOWN_KINDS,
  parseKindOption,
  type WorkloadKind,
  withKinds,
} from './kinds.js';
export {
  annotationsAt,
  isObject,
  type JsonObject,
  lastWriteTime,
  objectAt,
  readWorkload,
  type Workload,
  workloadAnnotations,
} from './object.js';
export {
  rolloutHeld,
  rolloutNotice,
} from './rollout-held.js';
export { rolloutIsObservable, rolloutProgress } from './rollout-progress.js';
export {
  isWindowOpen,
  nextWindowOpening,
  parseRolloutWindow,
} from './rollout-window.js';
export { deepEqual, templatesEqualIgnoringOurs } from './template.js';
export { isOwnWarning, PINNED_WARNING, PREVIOUS_KEY_WARNING, warning } from './warning.js';
