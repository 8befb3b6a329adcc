// The `confighash.dev/snapshots` template annotation (docs/design.md §2, §13): each ConfigMap
// source and the snapshot its references name, `configmap/app=app-snap-…`, sorted by source as
// `sources` is. Pure.

import { compareBytewise } from '../sources/index.js';

const PREFIX = 'configmap/';

/** Source name → snapshot name; entries that cannot be read are ignored. */
export function readListed(value: string | undefined): Map<string, string> {
  const listed = new Map<string, string>();
  if (!value) return listed;
  for (const entry of value.split(',')) {
    const equals = entry.indexOf('=');
    if (!entry.startsWith(PREFIX) || equals < 0) continue;
    const source = entry.slice(PREFIX.length, equals);
    const snapshot = entry.slice(equals + 1);
    if (source !== '' && snapshot !== '') listed.set(source, snapshot);
  }
  return listed;
}

/** The annotation's value; undefined for none. */
export function formatListed(listed: ReadonlyMap<string, string>): string | undefined {
  if (listed.size === 0) return undefined;
  return [...listed]
    .sort(([a], [b]) => compareBytewise(a, b))
    .map(([source, snapshot]) => `${PREFIX}${source}=${snapshot}`)
    .join(',');
}
