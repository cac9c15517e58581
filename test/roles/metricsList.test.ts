import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import '../../src/roles/metrics.ts';
import { registry } from '../../src/lib/metrics.ts';
import { specifiersOf } from '../support/importGraph.ts';

// Every metric lives with its owner (docs/architecture.md, "Layout"): src/lib/metrics.ts holds the
// registry and the generic metrics; a feature's are in its own `metrics.ts`, the worker's and the
// gateway's in theirs; src/roles/metrics.ts lists those files, so every role's /metrics names them all.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sources = ['src', 'workers'].flatMap((dir) =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file)),
);
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const ownersFiles = sources.filter(
  (file) => file.endsWith('/metrics.ts') && file !== 'src/lib/metrics.ts' && file !== 'src/roles/metrics.ts',
);

describe('metrics: each owner registers its own, one list for every role', () => {
  it('src/roles/metrics.ts lists every metrics.ts file (a feature’s, the worker’s, the gateway’s) and lib/metrics.ts', () => {
    expect(ownersFiles).to.include.members(['src/domains/push/metrics.ts', 'workers/metrics.ts', 'src/gateway/metrics.ts']);
    const listed = specifiersOf(read('src/roles/metrics.ts')).map(({ spec }) => join('src/roles', spec));
    expect(listed).to.have.members([...ownersFiles, 'src/lib/metrics.ts']);
  });

  it('only metrics.ts files define metrics, and only lib/metrics.ts imports prom-client', () => {
    const defining = sources.filter(
      (file) => !file.endsWith('/metrics.ts') && /\b(counter|gauge|histogram)\(\{|new FastHistogram\(/.test(read(file)),
    );
    expect(defining, 'files defining a metric outside a metrics.ts').to.deep.equal([]);
    const promClient = sources.filter((file) => specifiersOf(read(file)).some(({ spec }) => spec === 'prom-client'));
    expect(promClient).to.deep.equal(['src/lib/metrics.ts']);
  });

  it('the roles register exactly the metrics docs/operations.md lists ("Metrics")', async () => {
    const registered = (await registry.getMetricsAsJSON()).map((metric) => metric.name).filter((name) => name.startsWith('waveline_'));
    const table = read('docs/operations.md')
      .split('\n')
      .filter((line) => line.startsWith('| `waveline_'))
      .map((line) => line.split('|')[1]);
    const documented = table.flatMap((cell) => [...cell.matchAll(/`(waveline_[a-z_]+)`/g)].map((match) => match[1]));
    expect(registered).to.have.members(documented);
  });
});
