// The annotation names of the cluster contract (DESIGN.md §2). They are API:
// never rename them casually.

export const ANNOTATION_PREFIX = 'confighash.dev/';
export const ENABLED = 'confighash.dev/enabled';
export const INCLUDE = 'confighash.dev/include';
export const EXCLUDE = 'confighash.dev/exclude';
export const HASH = 'confighash.dev/hash';
export const SOURCES = 'confighash.dev/sources';
export const ADOPTED_HASH = 'confighash.dev/adopted-hash';
export const ROLLOUT_WINDOW = 'confighash.dev/rollout-window';

/** The namespace label that opts a namespace in. */
export const NAMESPACE_LABEL = 'confighash.dev/enabled';
