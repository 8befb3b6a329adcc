// The Event vocabulary of follow mode (docs/design.md §6 "Telling people"): reasons
// and actions are API for whoever filters `kubectl get events`; one owner.

import { FANOUT_HALTED } from '../workload/index.js';

export const EVENT_REASON = {
  /** A touch that rolls: the config changed. */
  changed: 'ConfigChanged',
  /** A touch that adopts a never-hashed workload without a restart. */
  recorded: 'ConfigHashRecorded',
  /** A change held until the rollout window opens. */
  deferred: 'RolloutDeferred',
  /** A change held because the rollout window cannot be read. */
  invalidWindow: 'InvalidRolloutWindow',
  /** A touch after which no pod (or only some) follows the new config by itself (docs/design.md §4). */
  held: 'RolloutHeld',
  /** A touch after which every pod stops before new ones start (Recreate). */
  outage: 'RolloutOutage',
  /** A change not rolled: new pods would miss a required source or key (docs/design.md §4). */
  missing: 'RequiredConfigMissing',
  /** A touch the cluster refused (RBAC, or the follower's fence): the workload did not roll. */
  denied: 'TouchDenied',
  /** A canary failed: the rest of that change's fan-out is held (on the source and the canary). */
  halted: FANOUT_HALTED,
} as const;

export const EVENT_ACTION = { touch: 'Touch', defer: 'Defer', fanout: 'FanOut' } as const;
