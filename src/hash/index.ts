export {
  contentOfConfigMap,
  contentOfSecret,
  type SecretData,
} from './content.js';
export { computeHash, contentDigest, encodeToBuffer } from './encode.js';
export {
  deriveNamespaceKey,
  ENCODING_HEADER,
  hashKeyId,
  type NamespaceKey,
  NamespaceKeys,
} from './keys.js';
export { HashMemo } from './memo.js';
export type {
  EncodedValue,
  HashInput,
  SourceContent,
} from './source-content.js';
