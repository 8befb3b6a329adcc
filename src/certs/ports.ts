// The ports of self-managed certificates: the Secrets of the webhook's own namespace
// (adapter: src/kube/secrets.ts) and the MutatingWebhookConfiguration's trust (adapter:
// src/kube/webhook-configuration.ts). The hash key Secret (src/hash-key/) reads through the
// same SecretStore.

export type SecretBytes = Readonly<Record<string, Buffer>>;

export interface StoredSecret {
  readonly data: SecretBytes;
  readonly resourceVersion: string;
}

/**
 * The Secrets of the webhook's own namespace (adapter: src/kube/secrets.ts). Each call gives
 * up when `signal` aborts, and after the adapter's own time limit.
 */
export interface SecretStore {
  readonly namespace: string;
  read(name: string, signal?: AbortSignal): Promise<StoredSecret | undefined>;
  /** 'exists' when someone else created it first (409 AlreadyExists). */
  create(
    name: string,
    type: string,
    data: SecretBytes,
    signal?: AbortSignal,
  ): Promise<'created' | 'exists'>;
  /** 'conflict' when it changed after `resourceVersion` was read (409 Conflict). */
  replace(
    name: string,
    type: string,
    data: SecretBytes,
    resourceVersion: string,
    signal?: AbortSignal,
  ): Promise<'replaced' | 'conflict'>;
}

/** The MutatingWebhookConfiguration's trust (adapter: src/kube/webhook-configuration.ts). */
export interface CaBundleTarget {
  /** Sets every webhook's caBundle of configuration `name` to `caBundle` (PEM). */
  ensure(name: string, caBundle: string): Promise<'patched' | 'unchanged'>;
}

export interface SelfManagedLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/** The injected clock's timers (src/runtime/clock.ts, passed in by src/commands). */
export interface CheckTimers {
  setTimer(ms: number, fire: () => void, options?: { readonly keepAlive: false }): () => void;
}

export interface SelfManagedPorts {
  readonly secrets: SecretStore;
  readonly webhooks: CaBundleTarget;
  readonly log: SelfManagedLog;
  /** The renewal checks' timers. */
  readonly timers: CheckTimers;
  readonly now?: () => Date;
  /** A check failed (confighash_certificate_renewal_failures_total, src/certs/certificate-metrics.ts). */
  readonly checkFailed?: () => void;
}
