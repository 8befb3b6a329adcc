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
} from './encode.js';
export { HashMemo } from './memo.js';
export type {
  EncodedValue,
  HashInput,
  SourceContent,
} from './types.js';
