// A source's content named for approval (docs/design.md §6, approval above a size): one live
// read of the source, its content's digest with the namespace's key, and the approval its
// owner wrote on it. The hash key stays here, as with every hash.

import { contentDigest, NamespaceKeys } from '../hash/index.js';
import type { SourceKind } from '../sources/index.js';
import type { ConfigSource } from './ports.js';

export type SourceDigest =
  | {
      readonly status: 'found';
      readonly digest: string;
      /** What its `confighash.dev/approved-change` annotation names, if anything. */
      readonly approvedChange?: string;
      /** Its fan-out record and control, as written (workload/fanout-record.ts reads them). */
      readonly fanout?: string;
      readonly fanoutControl?: string;
      readonly uid: string;
      readonly resourceVersion: string;
    }
  | { readonly status: 'absent' }
  | { readonly status: 'failed'; readonly detail: string };

export type SourceDigester = (
  source: { readonly kind: SourceKind; readonly name: string },
  namespace: string,
  signal: AbortSignal,
) => Promise<SourceDigest>;

export function createSourceDigester({
  configSource,
  hashKey,
}: {
  readonly configSource: ConfigSource;
  readonly hashKey: Uint8Array;
}): SourceDigester {
  const keys = new NamespaceKeys(hashKey);
  return async ({ kind, name }, namespace, signal) => {
    const result = await configSource.get(kind, namespace, name, signal);
    if (result.status !== 'found') return result;
    const digest = contentDigest(keys.get(namespace), { kind, name, content: result.content });
    const { approvedChange, fanout, fanoutControl, uid, resourceVersion } = result;
    return {
      status: 'found',
      digest,
      uid,
      resourceVersion,
      ...(approvedChange ? { approvedChange } : {}),
      ...(fanout ? { fanout } : {}),
      ...(fanoutControl ? { fanoutControl } : {}),
    };
  };
}
