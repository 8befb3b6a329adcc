// The decisions behind self-managed certificates, as pure functions: what is
// stored in the certificates Secret, whether it is still good for the hosts the
// apiserver dials, and what to do when it is not. Time is a parameter, so the
// tables in test/unit/renewal.test.ts can be read as the specification.

import { createPrivateKey, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

/** The keys of the certificates Secret (type kubernetes.io/tls, so tls.* are standard). */
export const CERT_KEYS = {
  authorityCert: 'ca.crt',
  authorityKey: 'ca.key',
  servingCert: 'tls.crt',
  servingKey: 'tls.key',
  /** What the MutatingWebhookConfiguration trusts: the current CA and, after a CA rotation, the previous one. */
  caBundle: 'ca-bundle.crt',
} as const;

export const AUTHORITY_VALID_DAYS = 3650;
export const SERVING_VALID_DAYS = 365;
/** Renew when less than this share of a certificate's lifetime is left. */
const RENEW_WHEN_LEFT = 1 / 3;

export interface Validity {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** What the stored PEMs say, reduced to the facts the plan depends on. */
export interface CertificateFacts {
  readonly authority: Validity;
  readonly authorityKeyMatches: boolean;
  readonly serving: Validity;
  readonly servingKeyMatches: boolean;
  readonly servingSignedByAuthority: boolean;
  /** Wanted host names or IPs the serving certificate does not cover. */
  readonly missingHosts: readonly string[];
}

export type StoredCertificates =
  | { readonly state: 'absent' }
  | { readonly state: 'unusable'; readonly reason: string }
  | { readonly state: 'present'; readonly facts: CertificateFacts };

export type CertificatePlan =
  | { readonly action: 'keep' }
  /** Nothing stored: a new CA and serving certificate, created (never replacing anything). */
  | { readonly action: 'create' }
  /** A new CA and serving certificate replace the stored ones; the old CA stays trusted a while. */
  | { readonly action: 'new-authority'; readonly reason: string }
  /** A new serving certificate from the stored CA; the caBundle does not change. */
  | { readonly action: 'renew-serving'; readonly reason: string };

/** True once less than `RENEW_WHEN_LEFT` of the lifetime is left (or it has expired). */
export function isRenewalDue(validity: Validity, now: Date): boolean {
  const lifetime = validity.notAfter.getTime() - validity.notBefore.getTime();
  const left = validity.notAfter.getTime() - now.getTime();
  return lifetime <= 0 || left < lifetime * RENEW_WHEN_LEFT;
}

export function planCertificates(stored: StoredCertificates, now: Date): CertificatePlan {
  if (stored.state === 'absent') return { action: 'create' };
  if (stored.state === 'unusable') return { action: 'new-authority', reason: stored.reason };
  const facts = stored.facts;
  if (!facts.authorityKeyMatches) {
    return { action: 'new-authority', reason: 'the CA key does not match the CA certificate' };
  }
  if (isRenewalDue(facts.authority, now)) {
    return { action: 'new-authority', reason: `the CA expires ${iso(facts.authority.notAfter)}` };
  }
  if (!facts.servingSignedByAuthority) {
    return { action: 'renew-serving', reason: 'the serving certificate is not signed by the CA' };
  }
  if (!facts.servingKeyMatches) {
    return { action: 'renew-serving', reason: 'the serving key does not match its certificate' };
  }
  if (isRenewalDue(facts.serving, now)) {
    return {
      action: 'renew-serving',
      reason: `the serving certificate expires ${iso(facts.serving.notAfter)}`,
    };
  }
  if (facts.missingHosts.length > 0) {
    return {
      action: 'renew-serving',
      reason: `the serving certificate does not cover ${facts.missingHosts.join(', ')}`,
    };
  }
  return { action: 'keep' };
}

/**
 * The caBundle after a CA rotation: the new CA first, then the CA it replaces
 * while that one has not expired, so replicas still serving a certificate from
 * the old CA stay trusted until they pick up the new one.
 */
export function caBundleAfterRotation(
  newAuthority: string,
  previous: string | undefined,
  now: Date,
): string {
  const kept: string[] = [newAuthority.trim()];
  if (previous) {
    try {
      const old = new X509Certificate(previous);
      if (new Date(old.validTo).getTime() > now.getTime()) kept.push(previous.trim());
    } catch {
      // An unreadable previous CA cannot have signed anything still in use.
    }
  }
  return `${kept.join('\n')}\n`;
}

/** Reads the Secret's data into facts; any unreadable or missing part makes it unusable. */
export function inspectCertificates(
  data: Readonly<Record<string, Buffer>> | undefined,
  wantedHosts: readonly string[],
): StoredCertificates {
  if (data === undefined) return { state: 'absent' };
  for (const key of Object.values(CERT_KEYS)) {
    if (!data[key] || data[key].length === 0) return { state: 'unusable', reason: `no ${key}` };
  }
  let authority: X509Certificate;
  let serving: X509Certificate;
  try {
    authority = new X509Certificate(data[CERT_KEYS.authorityCert]!);
    serving = new X509Certificate(data[CERT_KEYS.servingCert]!);
  } catch (error) {
    return {
      state: 'unusable',
      reason: `a certificate does not parse: ${(error as Error).message}`,
    };
  }
  return {
    state: 'present',
    facts: {
      authority: validityOf(authority),
      authorityKeyMatches: keyMatches(authority, data[CERT_KEYS.authorityKey]!),
      serving: validityOf(serving),
      servingKeyMatches: keyMatches(serving, data[CERT_KEYS.servingKey]!),
      servingSignedByAuthority:
        serving.checkIssued(authority) && serving.verify(authority.publicKey),
      missingHosts: wantedHosts.filter((host) => !covers(serving, host)),
    },
  };
}

function validityOf(certificate: X509Certificate): Validity {
  return { notBefore: new Date(certificate.validFrom), notAfter: new Date(certificate.validTo) };
}

function keyMatches(certificate: X509Certificate, keyPem: Buffer): boolean {
  try {
    return certificate.checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

function covers(certificate: X509Certificate, host: string): boolean {
  if (isIP(host)) return certificate.checkIP(host) !== undefined;
  return certificate.checkHost(host, { subject: 'never', wildcards: false }) !== undefined;
}

function iso(date: Date): string {
  return date.toISOString();
}
