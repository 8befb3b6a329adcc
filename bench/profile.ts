// `npx tsx bench/profile.ts bench/results/NAME.cpuprofile [top]`: where a V8 CPU
// profile (from `npm run bench -- --profile`) spends its time — self time by
// function and by package, the view BENCHMARKS.md's optimisation notes quote.

import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function where(url: string): string {
  if (url === '') return '(native/V8)';
  const build = url.indexOf('confighash-bench/');
  if (build >= 0) return url.slice(build + 'confighash-bench/'.length);
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  return src >= 0 ? url.slice(src + 1) : url;
}

async function main(): Promise<void> {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: tsx bench/profile.ts FILE.cpuprofile [top]');
  const top = Number(topArg ?? 30);
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  let total = 0;
  let idle = 0;
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    total += us;
    if (frame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const name = `${frame.functionName || '(anonymous)'}  ${where(frame.url)}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const place = where(frame.url);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
  }
  const busy = total - idle;
  const print = (title: string, entries: Map<string, number>, n: number) => {
    process.stdout.write(`\n${title} (share of ${(busy / 1e6).toFixed(2)} s busy)\n`);
    for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      process.stdout.write(`${((us / busy) * 100).toFixed(1).padStart(6)} %  ${name}\n`);
    }
  };
  process.stdout.write(
    `${file}: ${(total / 1e6).toFixed(2)} s sampled, ${((idle / total) * 100).toFixed(1)} % idle\n`,
  );
  print('self time by package / file', byPlace, Math.min(top, 40));
  print('self time by function', byFunction, top);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
