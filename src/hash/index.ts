export {
  type ConfigMapData,
  contentOfConfigMap,
  contentOfSecret,
  type SecretData,
} from './content.js';
export {
  computeHash,
  ENCODING_HEADER,
  encodeSources,
  encodeToBuffer,
  formatSourceList,
} from './encode.js';
export { HashMemo } from './memo.js';
export { compareBytewise, compareSources } from './order.js';
export type {
  EncodedValue,
  HashInput,
  KeySelection,
  SourceContent,
  SourceKind,
  SourceRef,
} from './types.js';
