export {
  type AnnotationTarget,
  buildAnnotationPatch,
  escapePointerSegment,
  type JsonPatchOperation,
} from './annotation-patch.js';
