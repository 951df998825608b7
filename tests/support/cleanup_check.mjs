// Nothing a check started outlives it. Runs checks with a fault injected after they started
// their processes ($CUTOFF_TEST_FAULT, see children.mjs) and requires that, once the check is
// gone, so is every process it had below it then: the `cutoff` server, headless Chromium,
// `cutoff lab`. The faults are the ways a check ends: its own failure path, process.exit()
// from a dependency (playwright-core 1.62+ on Node 18 did that and left `cutoff graphql serve`
// running), an uncaught exception, an unhandled rejection, SIGTERM, SIGINT, and SIGKILL (no
// code of the check runs; the kernel's parent-death signal and Chromium's closed DevTools pipe
// must do it).
//
//   node tests/support/cleanup_check.mjs --cutoff build/bin/cutoff [--only FAULT]
//
// Exit status: 0 when nothing outlived any check, 1 otherwise (naming the survivors), 2 for
// bad usage.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { spawnChild } from './children.mjs';

const NAME = 'cleanup_check';
const tests = fileURLToPath(new URL('..', import.meta.url));

const { values } = parseArgs({ options: { cutoff: { type: 'string' }, only: { type: 'string' }, help: { type: 'boolean' } } });
if (values.help || !values.cutoff) {
  console.log(readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(0, 13)
    .map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(values.help ? 0 : 2);
}

const graphiql = [`${tests}graphql/graphiql_served_check.mjs`, '--cutoff', values.cutoff];
const lab = [`${tests}lab/lab_e2e_check.mjs`, '--cutoff', values.cutoff, '--duration-s', '1'];
// What must be among the processes below the check when the fault happens (by /proc comm).
const server = ['cutoff'];
const serverAndBrowser = ['cutoff', 'chromium'];
const CASES = [
  { fault: 'service:fail', argv: graphiql, status: 1, expect: server },
  { fault: 'service:exit', argv: graphiql, status: 1, expect: server },
  { fault: 'browser:fail', argv: graphiql, status: 1, expect: serverAndBrowser },
  { fault: 'browser:throw', argv: graphiql, status: 1, expect: serverAndBrowser },
  { fault: 'browser:reject', argv: graphiql, status: 1, expect: serverAndBrowser },
  { fault: 'browser:hang', signal: 'SIGTERM', argv: graphiql, status: 143, expect: serverAndBrowser },
  { fault: 'browser:hang', signal: 'SIGINT', argv: graphiql, status: 130, expect: serverAndBrowser },
  { fault: 'browser:hang', signal: 'SIGKILL', argv: graphiql, status: 'SIGKILL', expect: serverAndBrowser },
  { fault: 'lab:hang', signal: 'SIGTERM', argv: lab, status: 143, expect: ['cutoff'] },
  { fault: 'lab:hang', signal: 'SIGKILL', argv: lab, status: 'SIGKILL', expect: ['cutoff'] },
];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A process as /proc shows it now: its name and start time (which tells a reused pid apart),
// or null when it is gone or a zombie (dead, waiting to be reaped).
function proc(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return null;
  return { comm: stat.slice(stat.indexOf('(') + 1, close), start: fields[19] };
}

async function runCase({ fault, signal, argv, status: wantStatus, expect }) {
  const label = `${fault}${signal ? ` + ${signal}` : ''}`;
  const child = spawnChild(process.execPath, argv, {
    stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CUTOFF_TEST_FAULT: fault },
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve(code ?? sig)));
  const problems = [];
  const seen = new Map();
  let listed = [];
  try {
    const line = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no fault line within 30 s')), 30000);
      let buffered = '';
      child.stdout.on('data', (d) => {
        out += d;
        buffered += d;
        const m = /^fault \S+: pid \d+ descendants (.*)$/m.exec(buffered);
        if (m) { clearTimeout(timer); resolve(m[1]); }
      });
      exited.then((s) => { clearTimeout(timer); reject(new Error(`the check ended (${s}) before the fault`)); });
    });
    listed = line.trim().split(/\s+/).filter(Boolean).map((e) => e.split(':')).map(([pid, comm]) => [Number(pid), comm]);
    // setpriv execs the command in its place: give it a moment before reading names.
    if (signal) await sleep(300);
    for (const [pid] of listed) {
      const p = proc(pid);
      if (p) seen.set(pid, p);
    }
    if (signal) listed = [...seen].map(([pid, p]) => [pid, p.comm]);
    const names = listed.map(([, comm]) => comm);
    for (const name of expect) {
      if (!names.some((n) => n.startsWith(name))) problems.push(`no ${name} process below the check (${names.join(', ')})`);
    }
    if (signal) child.kill(signal);
    const status = await Promise.race([exited, sleep(20000).then(() => 'still running after 20 s')]);
    if (status !== wantStatus) problems.push(`the check ended with ${status}, not ${wantStatus}`);
  } catch (e) {
    problems.push(e.message);
  }
  child.kill('SIGKILL');
  // Chromium quits when its pipe closes, the kernel kills the tied children: allow a moment.
  const until = Date.now() + 5000;
  let survivors = [];
  do {
    survivors = [...seen].filter(([pid, p]) => proc(pid)?.start === p.start);
    if (!survivors.length) break;
    await sleep(100);
  } while (Date.now() < until);
  for (const [pid, p] of survivors) {
    problems.push(`${p.comm} (pid ${pid}) outlived the check`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  if (problems.length) {
    console.log(`FAIL ${label}: ${problems.join('; ')}\n--- the check's output:\n${out.trim()}\n---`);
    return false;
  }
  const names = listed.map(([, comm]) => comm);
  const counted = [...new Set(names)].map((n) => `${names.filter((m) => m === n).length} ${n}`).join(', ');
  console.log(`ok   ${label}: the check ended with ${wantStatus}; below it were ${counted}; none is left`);
  return true;
}

let failed = 0;
for (const c of CASES) {
  if (values.only && !`${c.fault}${c.signal ? `+${c.signal}` : ''}`.includes(values.only)) continue;
  if (!(await runCase(c))) failed += 1;
}
console.log(failed ? `${NAME}: ${failed} case(s) left processes behind or ended wrongly` : `${NAME}: ok`);
process.exit(failed ? 1 : 0);
