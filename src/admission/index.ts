export { decideAnnotations } from './decide.js';
export { decodeAdmissionReview } from './decode.js';
export { createMutator } from './mutate.js';
export {
  MAX_NAMESPACE_READS,
  type NamespaceCheck,
  type NamespaceVerdict,
  type NamespaceWatch,
  startNamespaceCheck,
} from './namespace-check.js';
export type { NamespaceApi, NamespaceLabels, NamespaceRead } from './ports.js';
export { allowed, patched } from './response.js';
export type {
  LookupRecord,
  MutationResult,
  Mutator,
  Outcome,
  SkipCode,
} from './result.js';
export {
  lookupBudgetMs,
  MAX_TIMEOUT_MS,
  WEBHOOK_TIMEOUT_MS,
} from './review-timeout.js';
export type {
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReviewResponse,
  Operation,
} from './review-types.js';
export { selectTarget, type Target } from './target.js';
