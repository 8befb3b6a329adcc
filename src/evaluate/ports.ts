// The port "the hash now" reads through (adapter: src/kube/api-config-source.ts; in
// memory: test/support/memory-source.ts): one live read of a ConfigMap or Secret, whose
// outcomes are values.

import type { SourceContent } from '../hash/index.js';
import type { SourceKind } from '../sources/index.js';

export type LookupFailure =
  | 'timeout'
  | 'forbidden'
  | 'unauthorized'
  | 'server-error'
  | 'network'
  | 'bad-response'
  | 'over-budget';

export type LookupResult =
  | {
      readonly status: 'found';
      readonly uid: string;
      readonly resourceVersion: string;
      readonly content: SourceContent;
      /**
       * Its `confighash.dev/approved-change`, `fanout` and `fanout-control` annotations
       * (docs/design.md §6), the only ones read.
       */
      readonly approvedChange?: string;
      readonly fanout?: string;
      readonly fanoutControl?: string;
    }
  | { readonly status: 'absent' }
  | { readonly status: 'failed'; readonly failure: LookupFailure; readonly detail: string };

/**
 * Counts an answer's bytes as they arrive (its declared length, else each chunk); false:
 * no room, and the read fails as `over-budget` without reading further.
 */
type CountAnswerBytes = (bytes: number) => boolean;

/** Reads ConfigMaps and Secrets. Outcomes a user sees are values, never exceptions. */
export interface ConfigSource {
  /** Reads one object live; resolves (never rejects) once `signal` aborts. */
  get(
    kind: SourceKind,
    namespace: string,
    name: string,
    signal: AbortSignal,
    countBytes?: CountAnswerBytes,
  ): Promise<LookupResult>;
}
