// The port through which the core reads ConfigMaps and Secrets. Outcomes a user
// sees (absent, forbidden, timed out) are values, never exceptions.

import type { SourceContent, SourceKind } from '../hash/index.js';

export type LookupFailure =
  | 'timeout'
  | 'forbidden'
  | 'unauthorized'
  | 'server-error'
  | 'network'
  | 'bad-response';

export type LookupResult =
  | {
      readonly status: 'found';
      readonly uid: string;
      readonly resourceVersion: string;
      readonly content: SourceContent;
    }
  | { readonly status: 'absent' }
  | { readonly status: 'failed'; readonly failure: LookupFailure; readonly detail: string };

export interface ConfigSource {
  /** Reads one object live; resolves (never rejects) once `signal` aborts. */
  get(
    kind: SourceKind,
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<LookupResult>;
}
