// The namespace check as the unit tests need it: every namespace opted in, so
// that a test about hashing is not also a test about namespaces.

import type { NamespaceCheck } from '../../src/admission/namespace-check.js';

export const everyNamespaceOptedIn: NamespaceCheck = {
  check: async () => ({ status: 'opted-in', workloads: 'all' }),
};
