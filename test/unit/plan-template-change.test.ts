// Which fields of a pod template a plan names as changed, and what it leaves to the
// config's part of the verdict: the annotations the webhook itself writes.

import { describe, expect, it } from 'vitest';
import { describeTemplateChange, templateDifferences } from '../../src/plan/template-change.js';

const template = (image: string, annotations?: Record<string, string>) => ({
  metadata: { labels: { app: 'web' }, ...(annotations ? { annotations } : {}) },
  spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 80 }] }] },
});

describe('templateDifferences', () => {
  it('names each field that differs, with list indexes', () => {
    expect(templateDifferences(template('app:1'), template('app:2'))).toEqual([
      'template.spec.containers[0].image',
    ]);
  });

  it('a list of another length is one difference: the list', () => {
    const two = template('app:1');
    two.spec.containers.push({ name: 'side', image: 'side:1', ports: [] });
    expect(templateDifferences(template('app:1'), two)).toEqual(['template.spec.containers']);
  });

  it("leaves out the webhook's own annotations, and an annotations map left empty by that", () => {
    const hashed = template('app:1', {
      'confighash.dev/hash': 'a'.repeat(64),
      'confighash.dev/sources': 'configmap/web-config',
    });
    expect(templateDifferences(hashed, template('app:1'))).toEqual([]);
  });

  it('any other annotation counts: kubectl rollout restart changes the template', () => {
    const restarted = template('app:1', {
      'kubectl.kubernetes.io/restartedAt': '2026-12-01T00:00:00Z',
    });
    expect(templateDifferences(template('app:1'), restarted)).toEqual([
      'template.metadata.annotations',
    ]);
  });

  it('a field added or removed is a difference', () => {
    const withEnv = template('app:1') as ReturnType<typeof template> & {
      spec: { hostNetwork?: boolean };
    };
    withEnv.spec.hostNetwork = true;
    expect(templateDifferences(template('app:1'), withEnv)).toEqual(['template.spec.hostNetwork']);
  });
});

describe('describeTemplateChange', () => {
  it('names three fields, then counts the rest', () => {
    expect(describeTemplateChange(['a', 'b', 'c', 'd', 'e'])).toBe(
      'the pod template itself changes (a, b, c and 2 more): it rolls whatever the config',
    );
    expect(describeTemplateChange(['a'])).toBe(
      'the pod template itself changes (a): it rolls whatever the config',
    );
  });
});
