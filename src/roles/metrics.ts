// Every metric of every role, defined by its owner (lib/metrics.ts: the registry and the generic HTTP
// metrics) and listed here: each role imports this list before it starts, so its /metrics names every
// metric of the deployment as it always has (a metric not counted in that role shows no series, or its
// zero), and `waveline dev` serves them all from one /metrics. A new feature with metrics defines them in
// its own `domains/<feature>/metrics.ts` with lib/metrics.ts's `counter`, `gauge` or `histogram`, and
// adds one line here; it never edits lib (docs/operations.md, "Metrics", lists them for operators).
import '../lib/metrics.ts';
import '../lib/replicas/metrics.ts';
import '../../workers/metrics.ts';
import '../domains/audience/metrics.ts';
import '../domains/push/metrics.ts';
import '../domains/artwork/metrics.ts';
import '../domains/inbox/metrics.ts';
import '../gateway/metrics.ts';
