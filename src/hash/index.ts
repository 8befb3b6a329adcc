export {
  type ConfigMapData,
  contentOfConfigMap,
  contentOfSecret,
  type SecretData,
} from './content.js';
export { computeHash, contentDigest, encodeSources, encodeToBuffer } from './encode.js';
export {
  deriveNamespaceKey,
  ENCODING_HEADER,
  hashKeyId,
  NAMESPACE_KEY_HEADER,
  type NamespaceKey,
  NamespaceKeys,
} from './keys.js';
export { HashMemo } from './memo.js';
export type {
  EncodedValue,
  HashInput,
  SourceContent,
} from './types.js';
