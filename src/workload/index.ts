export * from './annotations.js';
export { FAILING_WAIT_REASONS, podFailure, podSelectorOf, runsPods } from './canary-pods.js';
export {
  type AwaitedChange,
  awaitingApprovalNote,
  FANOUT_AWAITS_APPROVAL,
  FANOUT_HALTED,
  type FanoutHalt,
  fanoutHaltedNote,
  readAwaitingApprovalNote,
} from './fanout-note.js';
export {
  askFanout,
  type ControlAsk,
  FANOUT_CONTROL,
  FANOUT_STATE,
  type FanoutAction,
  type FanoutControl,
  type FanoutHold,
  type FanoutPhase,
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
export { findSources, type SourceDiscovery } from './find-sources.js';
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
  type HashMadeWith,
  readHashedVersions,
  type SourceVersion,
} from './hashed-versions.js';
export {
  EVERY_KNOWN_KIND,
  findWorkloadKind,
  findWorkloadKindByName,
  formatWorkload,
  type GroupVersionKind,
  HANDLED_KINDS,
  KIND_OPTION_FORMAT,
  type KindParse,
  KNOWN_KINDS,
  parseKindOption,
  type RolloutModel,
  type WorkloadKind,
  withKinds,
} from './kinds.js';
export {
  annotationsAt,
  isObject,
  type JsonObject,
  lastWriteTime,
  objectAt,
  podTemplateOf,
  readWorkload,
  type Workload,
  workloadAnnotations,
} from './object.js';
export {
  type RolloutEffect,
  type RolloutNotice,
  rolloutHeld,
  rolloutNotice,
} from './rollout-held.js';
export { type RolloutProgress, rolloutIsObservable, rolloutProgress } from './rollout-progress.js';
export {
  isWindowOpen,
  nextWindowOpening,
  parseRolloutWindow,
  type RolloutWindow,
} from './rollout-window.js';
export { deepEqual, templatesEqualIgnoringOurs } from './template.js';
export { isOwnWarning, PREVIOUS_KEY_WARNING, warning } from './warning.js';
