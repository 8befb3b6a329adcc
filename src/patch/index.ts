export {
  type AnnotationTarget,
  buildAnnotationPatch,
  type DesiredAnnotations,
  escapePointerSegment,
  type JsonPatchOperation,
} from './annotations.js';
