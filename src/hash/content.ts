// Turns API objects into SourceContent. Only data counts: metadata, labels,
// `type`, `immutable` and resourceVersion never change the hash.

import type { EncodedValue, SourceContent } from './types.js';

export interface ConfigMapData {
  readonly data?: Readonly<Record<string, string>> | null;
  readonly binaryData?: Readonly<Record<string, string>> | null;
}

export interface SecretData {
  readonly data?: Readonly<Record<string, string>> | null;
}

export function contentOfConfigMap(configMap: ConfigMapData): SourceContent {
  const content = new Map<string, EncodedValue>();
  addAll(content, configMap.data, 'utf8');
  addAll(content, configMap.binaryData, 'base64');
  return content;
}

export function contentOfSecret(secret: SecretData): SourceContent {
  const content = new Map<string, EncodedValue>();
  addAll(content, secret.data, 'base64');
  return content;
}

function addAll(
  into: Map<string, EncodedValue>,
  values: Readonly<Record<string, string>> | null | undefined,
  encoding: EncodedValue['encoding'],
): void {
  if (!values) return;
  for (const [key, text] of Object.entries(values)) {
    if (typeof text === 'string') into.set(key, { text, encoding });
  }
}
