// The one spelling of confighash's warnings. Admission answers carry them, follow
// mode's Event notes are written the same way, and plan and explain tell the
// webhook's own apart from the rest of a dry run's warnings by the same prefix.

const PREFIX = 'confighash: ';

/** `confighash: TEXT`, as people see it in kubectl's output and in Events. */
export function warning(text: string): string {
  return `${PREFIX}${text}`;
}

/** True for a warning confighash gave, not the apiserver or another webhook. */
export function isOwnWarning(text: string): boolean {
  return text.startsWith(PREFIX);
}

/**
 * The webhook kept a hash made with a previous hash key (docs/security.md "Rotate the
 * hash key"): plan and explain find it in a dry run's answer by this exact text.
 */
export const PREVIOUS_KEY_WARNING = warning(
  'hash made with a previous key; kept while the config it hashes is unchanged',
);

/**
 * A snapshot workload's template names an earlier revision's snapshots while the content now is
 * what it last rolled to (docs/design.md §13): kept as it is. Plan and explain find this text.
 */
export const PINNED_WARNING = warning(
  'pinned to the config of an earlier revision by a rollback; apply the manifest to roll forward',
);
