// Instructions per request, counted by valgrind's callgrind: on a machine shared with other engineers
// req/s and CPU time swing with their load, while the instructions a server executes for a request do
// not (bench:reads with BENCH_CALLGRIND=1). The server runs under callgrind with instrumentation off
// (startup and warm-up at valgrind's plain speed); each measurement zeroes the counters, switches
// instrumentation on, sends a fixed number of requests, switches it off and dumps. User space only — the
// kernel's part (the socket writes) is not in the count.
//
// What is counted: with BENCH_CALLGRIND=1, only what runs inside libuv's read callback of a connection
// (`node::LibuvStreamWrap::OnUvRead`: the HTTP parser, the request handler, the response's write and the
// ticks that follow it) — every request's own work, on every server alike, and nothing the clock drives
// (timers, metrics collectors, V8's idle-time GC and concurrent compiler threads), which on this machine
// outweighed the requests when a measurement spanned a minute (docs/benchmarks.md#instruction-counts).
// BENCH_CALLGRIND=all counts every instruction of every thread instead.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIR = join(tmpdir(), `waveline-callgrind-${process.pid}`);

/** The command prefix that runs a process under callgrind with instrumentation off. */
export function callgrindWrap(): string[] {
  mkdirSync(DIR, { recursive: true });
  const scope = process.env.BENCH_CALLGRIND === 'all' ? [] : ['--toggle-collect=node::LibuvStreamWrap::OnUvRead*'];
  return ['valgrind', '--tool=callgrind', '--instr-atstart=no', ...scope, `--callgrind-out-file=${DIR}/cg.%p`, '--dump-instr=no'];
}

function control(pid: number, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });
}

/** Instructions the process `pid` executes while `work` runs (every thread, user space). */
export async function countInstructions(pid: number, work: () => Promise<unknown>): Promise<number> {
  control(pid, '--zero');
  control(pid, '--instr=on');
  try {
    await work();
  } finally {
    control(pid, '--instr=off');
  }
  const before = new Set(readdirSync(DIR));
  control(pid, '--dump');
  const dump = readdirSync(DIR).find((name) => name.startsWith(`cg.${pid}`) && !before.has(name));
  if (!dump) throw new Error(`callgrind wrote no dump for ${pid}`);
  const text = readFileSync(join(DIR, dump), 'utf8');
  rmSync(join(DIR, dump));
  const totals = /^totals: (\d+)/m.exec(text);
  if (!totals) throw new Error(`no totals in callgrind dump ${dump}`);
  return Number(totals[1]);
}

export function removeCallgrindFiles(): void {
  rmSync(DIR, { recursive: true, force: true });
}
