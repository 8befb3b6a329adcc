export { DEFAULT_TIMEOUT_MS, lookupBudgetMs, parseGoDuration } from './deadline.js';
export { type DecodeResult, decodeAdmissionReview } from './decode.js';
export { allowed, patched } from './response.js';
export type {
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReviewResponse,
  GroupVersionKind,
  Operation,
} from './types.js';
export { isOwnWarning, PREVIOUS_KEY_WARNING, warning } from './warning.js';
