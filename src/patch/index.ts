export {
  type AnnotationTarget,
  buildAnnotationPatch,
  escapePointerSegment,
  type JsonPatchOperation,
} from './annotations.js';
