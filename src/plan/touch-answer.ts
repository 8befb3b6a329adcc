// The webhook's answer to a dry-run `{}` merge patch, read the one way both plan
// and explain read it: which hash it would write, whether the template's hash
// changes (a rollout), whether that hash was made with a previous hash key, and
// whether the webhook answered at all.

import {
  ADOPTED_HASH,
  annotationsAt,
  HASH,
  isOwnWarning,
  PREVIOUS_KEY_WARNING,
  readWorkload,
  type Workload,
} from '../workload/index.js';
import type { DryRunTouch } from './ports.js';

export interface Hashes {
  readonly templateHash: string | null;
  readonly adoptedHash: string | null;
}

export function hashesOf(workload: Workload): Hashes {
  return {
    templateHash: annotationsAt(workload.template, ['metadata'])[HASH] ?? null,
    adoptedHash: workload.annotations[ADOPTED_HASH] ?? null,
  };
}

interface TouchAnswer {
  /** The template hash, else adopted-hash, the webhook writes. */
  readonly wouldWrite: string | null;
  /** The template's hash changes: the next write rolls. */
  readonly rolls: boolean;
  /** False when a workload with sources came back with neither hash: no webhook answered. */
  readonly reached: boolean;
  /** The hash kept is current, made with a previous hash key (the webhook said so). */
  readonly previousKey: boolean;
  /** The webhook's own warnings (`confighash: …`), the previous-key one aside. */
  readonly warnings: readonly string[];
}

export function readTouchAnswer(
  live: Workload,
  touch: DryRunTouch,
  hasSources: boolean,
): TouchAnswer {
  const after = hashesOf(readWorkload(touch.object, live.kind));
  const own = touch.warnings.filter(isOwnWarning);
  const warnings = own.filter((text) => text !== PREVIOUS_KEY_WARNING);
  return {
    wouldWrite: after.templateHash ?? after.adoptedHash,
    rolls: after.templateHash !== hashesOf(live).templateHash,
    previousKey: own.length > warnings.length,
    reached:
      own.length > 0 || !hasSources || after.templateHash !== null || after.adoptedHash !== null,
    warnings,
  };
}
