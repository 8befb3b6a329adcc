export {
  type CurrentHash,
  createEvaluator,
  type Digests,
  type Evaluation,
  type Evaluator,
  type EvaluatorDependencies,
  findMissingRequired,
  formatMissingRequired,
  isCurrentHash,
  MAX_ANSWER_BYTES,
  MAX_LOOKUPS_IN_FLIGHT,
  MAX_LOOKUPS_PER_EVALUATION,
  MAX_SOURCES,
  type MissingRequired,
} from './evaluate.js';
export type { ConfigSource, LookupFailure, LookupResult } from './ports.js';
export { createSourceDigester, type SourceDigest, type SourceDigester } from './source-digest.js';
