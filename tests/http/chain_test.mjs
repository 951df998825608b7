// Three services, A -> B -> C, as separate `cutoff http relay` processes on loopback.
// Proves that a deadline crosses service boundaries:
//   1. the budget each hop receives shrinks by the time spent before it;
//   2. when A's deadline passes, B and C stop within milliseconds (their metrics say so),
//      not when their own work or their own maximum budget would have ended;
//   3. when A's caller hangs up, A, B and C are all cancelled within milliseconds;
//   4. forged budget headers never extend anything; SIGTERM drains within the grace period;
//   5. all of it holds when the hops talk TLS (https:// with a CA made for the run).
//
//   node tests/http/chain_test.mjs --cutoff build/bin/cutoff [--time-scale N]
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { metric, startService } from '../support/service.mjs';
import { httpsRequest, removeCa, throwawayCa } from '../support/tls.mjs';

const { values } = parseArgs({
  options: { cutoff: { type: 'string' }, 'time-scale': { type: 'string' }, help: { type: 'boolean' } },
});
if (values.help || !values.cutoff) {
  console.log('usage: node tests/http/chain_test.mjs --cutoff PATH_TO_CUTOFF [--time-scale N]');
  process.exit(values.help ? 0 : 2);
}
const scale = Number(values['time-scale'] ?? process.env.CUTOFF_TEST_TIME_SCALE ?? 1);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// `tls`: B and C serve https:// (A stays http:// for the test's own requests), and the hops
// that call them trust the run's CA.
async function chain(workMs, tls = null) {
  const serve = tls ? ['--tls-cert', tls.cert, '--tls-key', tls.key] : [];
  const trust = tls ? ['--ca-file', tls.ca] : [];
  const c = await startService(values.cutoff, ['http', 'relay', '--name', 'C', '--work-ms', String(workMs.C), ...serve]);
  const b = await startService(values.cutoff, ['http', 'relay', '--name', 'B', '--work-ms', String(workMs.B),
    '--next', c.url + '/work', ...serve, ...trust]);
  const a = await startService(values.cutoff, ['http', 'relay', '--name', 'A', '--work-ms', String(workMs.A),
    '--next', b.url + '/work', ...trust]);
  if (tls) assert.ok(b.url.startsWith('https://') && c.url.startsWith('https://'), `${b.url} ${c.url}`);
  for (const svc of [a, b, c]) svc.ca = tls?.ca;
  return { a, b, c, all: [a, b, c] };
}

async function metrics(svc) {
  if (svc.url.startsWith('https://')) return (await httpsRequest(svc.url + '/metrics', { ca: svc.ca })).body;
  return (await fetch(svc.url + '/metrics')).text();
}

const stopped = (reason) => `cutoff_http_stopped_total{route="work",reason="${reason}"}`;

// Polls until every service reports a stop (the sum of `series`) >= 1, or gives up after `limitMs`.
async function waitForStops(services, series, limitMs) {
  const start = performance.now();
  const count = (t) => series.reduce((n, s) => n + metric(t, s), 0);
  for (;;) {
    const texts = await Promise.all(services.map(metrics));
    if (texts.every((t) => count(t) >= 1)) return performance.now() - start;
    if (performance.now() - start > limitMs) {
      throw new Error(`not every service reported ${series.join(' or ')} within ${limitMs} ms:\n` +
                      texts.map((t, i) => `${services[i].url}: ${count(t)}`).join('\n'));
    }
    await sleep(2);
  }
}

function lastLog(svc) {
  const lines = svc.logLines().filter((l) => l.operation === 'work');
  return lines[lines.length - 1];
}

// The request's log line reaches this process through a pipe, and the server counts a stop
// in its metrics before it writes that line: polls until the line is here.
async function logLine(svc, limitMs) {
  const start = performance.now();
  for (;;) {
    const line = lastLog(svc);
    if (line) return line;
    if (performance.now() - start > limitMs) throw new Error(`${svc.url}: no request log line within ${limitMs} ms`);
    await sleep(2);
  }
}

let failures = 0;
async function scenario(name, body) {
  const t0 = performance.now();
  try {
    await body();
    console.log(`ok   ${name} (${Math.round(performance.now() - t0)} ms)`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}\n${e.stack ?? e}`);
  }
}

await scenario('the budget seen at each hop shrinks by the time spent before it', async () => {
  const s = await chain({ A: 40, B: 40, C: 0 });
  try {
    const res = await fetch(s.a.url + '/work', { headers: { 'Deadline-Budget-Ms': '3000' } });
    assert.equal(res.status, 200);
    const body = await res.json();
    const [a, b, c] = [body.budget_ms, body.downstream.budget_ms, body.downstream.downstream.budget_ms];
    console.log(`     budgets received: A ${a} ms, B ${b} ms, C ${c} ms`);
    assert.ok(a <= 3000 && a > 2900, `A received ${a}`);
    assert.ok(b <= a - 40, `B received ${b}, A ${a}: B must lose at least A's 40 ms of work`);
    assert.ok(c <= b - 40, `C received ${c}, B ${b}`);
    assert.ok(c > 3000 - 400 * scale, `C received ${c}: far too little`);
  } finally {
    await Promise.all(s.all.map((x) => x.stop()));
  }
});

// Sends A a request with a 400 ms budget, checks A's 504, and waits until B and C report a
// stop. Returns how long A took and how much later B and C had stopped.
async function deadlineAtA(s) {
  const t0 = performance.now();
  const res = await fetch(s.a.url + '/work', { headers: { 'Deadline-Budget-Ms': '400' } });
  const took = performance.now() - t0;
  assert.equal(res.status, 504);
  assert.equal(res.headers.get('deadline-expired'), '1');
  assert.ok(took >= 390 && took < 400 + 300 * scale, `A answered after ${took} ms`);
  // B and C hold budgets derived from A's, so their own deadlines fall within a millisecond
  // or two of A's; A's client closing its connection usually gets there first (cancelled).
  const lag = await waitForStops([s.b, s.c], [stopped('deadline_exceeded'), stopped('cancelled')], 200 * scale);
  return { took, lag };
}

await scenario("when A's deadline passes, B and C stop within milliseconds", async () => {
  // C would work 20 s and grants up to 30 s itself: only the propagated budget can stop it.
  const s = await chain({ A: 50, B: 50, C: 20000 });
  try {
    const { took, lag } = await deadlineAtA(s);
    console.log(`     A answered 504 after ${Math.round(took)} ms; B and C had stopped ${Math.round(lag)} ms later`);
    for (const svc of [s.b, s.c]) {
      assert.ok(metric(await metrics(svc), 'cutoff_overshoot_seconds_count{layer="http"}') >= 1);
    }
    // A's and B's clients were stopped in flight too, each layer counted apart.
    for (const svc of [s.a, s.b]) {
      const text = await metrics(svc);
      const clientStops = ['deadline_exceeded', 'cancelled'].reduce(
        (n, r) => n + metric(text, `cutoff_stops_total{layer="http_client",reason="${r}"}`), 0);
      assert.ok(clientStops >= 1, `${svc.url}: no http_client stop counted`);
      assert.ok(metric(text, 'cutoff_overshoot_seconds_count{layer="http_client"}') >= 1);
    }
    const [la, lc] = [await logLine(s.a, 500 * scale), await logLine(s.c, 500 * scale)];
    assert.ok(['deadline_exceeded', 'cancelled'].includes(lc.outcome), lc.outcome);
    const apart = Math.abs(Date.parse(lc.ts) - Date.parse(la.ts));
    console.log(`     C received ${lc.budget_ms} ms and stopped (${lc.outcome}) after ${lc.used_ms} ms,` +
                ` ${apart} ms from A's answer`);
    assert.ok(apart < 50 * scale, `C ended ${apart} ms away from A`);
  } finally {
    await Promise.all(s.all.map((x) => x.stop()));
  }
});

await scenario("when A's caller hangs up, A, B and C are cancelled within milliseconds", async () => {
  const s = await chain({ A: 20, B: 20, C: 20000 });
  try {
    const abort = new AbortController();
    const pending = fetch(s.a.url + '/work', { headers: { 'Deadline-Budget-Ms': '10000' }, signal: abort.signal })
        .catch((e) => e);
    await sleep(300);
    const hungUp = performance.now();
    abort.abort();
    await pending;
    const lag = await waitForStops([s.a, s.b, s.c], [stopped('cancelled')], 500 * scale);
    assert.ok(performance.now() - hungUp < 500 * scale);
    const lc = await logLine(s.c, 500 * scale);
    console.log(`     every hop was cancelled ${Math.round(lag)} ms after the caller hung up` +
                ` (C after ${lc.used_ms} ms of its 10 s budget)`);
    assert.equal(lc.outcome, 'cancelled');
    assert.ok(lc.used_ms < 1000 * scale);
  } finally {
    await Promise.all(s.all.map((x) => x.stop()));
  }
});

await scenario("over TLS (B and C serve https://): A's deadline stops B and C within milliseconds", async () => {
  const tls = throwawayCa();
  const s = await chain({ A: 50, B: 50, C: 20000 }, tls);
  try {
    const { took, lag } = await deadlineAtA(s);
    console.log(`     over TLS: A answered 504 after ${Math.round(took)} ms; B and C had stopped ${Math.round(lag)} ms later`);
    const lc = await logLine(s.c, 500 * scale);
    assert.ok(lc.budget_ms < 400, `C received ${lc.budget_ms} ms`);
    assert.ok(['deadline_exceeded', 'cancelled'].includes(lc.outcome), lc.outcome);
    for (const svc of [s.b, s.c]) {
      assert.equal(metric(await metrics(svc), 'cutoff_http_bad_requests_total{reason="tls_handshake_failed"}'), 0);
    }
  } finally {
    await Promise.all(s.all.map((x) => x.stop()));
    removeCa(tls);
  }
});

await scenario('forged and malformed budget headers never extend a deadline and are counted', async () => {
  const svc = await startService(values.cutoff, ['http', 'relay', '--name', 'X', '--max-budget-ms', '1000']);
  try {
    const forged = [
      ['Deadline-Budget-Ms', '9'.repeat(5000)], ['Deadline-Budget-Ms', '-100'], ['Deadline-Budget-Ms', 'NaN'],
      ['Deadline-Budget-Ms', '99999999999999999999'], ['Deadline-Budget-Ms', '1e9'], ['grpc-timeout', '10X'],
      ['grpc-timeout', '123456789S'], ['grpc-timeout', 'm'], ['X-Request-Deadline', '2999-01-01T00:00:00Z'],
      ['X-Request-Deadline', '1999-01-01T00:00:00Z'], ['X-Request-Deadline', 'yesterday'],
    ];
    for (const [name, value] of forged) {
      const res = await fetch(svc.url + '/work', { headers: { [name]: value } });
      const body = await res.json();
      assert.equal(res.status, 200, `${name}: ${value.slice(0, 40)}`);
      assert.ok(body.budget_ms <= 1000, `${name}: ${value.slice(0, 40)} granted ${body.budget_ms} ms`);
    }
    // Two values that disagree: the tighter one, and the conflict is counted.
    const both = await fetch(svc.url + '/work', { headers: [['Deadline-Budget-Ms', '50'], ['Deadline-Budget-Ms', '900']] });
    assert.ok((await both.json()).budget_ms <= 50);
    // Zero means spent.
    const zero = await fetch(svc.url + '/work', { headers: { 'Deadline-Budget-Ms': '0' } });
    assert.equal(zero.status, 504);
    const text = await metrics(svc);
    let rejected = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith('cutoff_budget_header_rejected_total{')) rejected += Number(line.split(' ')[1]);
    }
    console.log(`     ${forged.length + 1} bad values, ${rejected} counted as rejected`);
    assert.ok(rejected >= forged.length + 1, `only ${rejected} rejections counted`);
    assert.equal((await fetch(svc.url + '/healthz')).status, 200);
  } finally {
    await svc.stop();
  }
});

await scenario('SIGTERM drains: the request in flight finishes, then the process exits 0', async () => {
  const svc = await startService(values.cutoff, ['http', 'relay', '--name', 'T', '--work-ms', String(300),
    '--grace-ms', String(3000 * scale)]);
  const pending = fetch(svc.url + '/work').then(async (r) => ({ status: r.status, body: await r.json() }));
  await sleep(100);
  svc.child.kill('SIGTERM');
  const answer = await pending;
  assert.equal(answer.status, 200);
  assert.equal(answer.body.service, 'T');
  const exit = await svc.exited;
  assert.equal(exit.code, 0);
  assert.ok(svc.logLines().some((l) => l.event === 'shutdown' && l.signal === 15));
});

await scenario('SIGTERM with a request that outlives the grace period: it is stopped with shutdown (503)', async () => {
  const svc = await startService(values.cutoff, ['http', 'relay', '--name', 'U', '--work-ms', '20000',
    '--grace-ms', '200']);
  const pending = fetch(svc.url + '/work').then(async (r) => ({ status: r.status, body: await r.json() }));
  await sleep(100);
  const t0 = performance.now();
  svc.child.kill('SIGTERM');
  const answer = await pending;
  const took = performance.now() - t0;
  assert.equal(answer.status, 503);
  assert.equal(answer.body.error.code, 'shutdown');
  assert.ok(took >= 190 && took < 200 + 1000 * scale, `answered ${took} ms after SIGTERM`);
  assert.equal((await svc.exited).code, 0);
});

process.exit(failures ? 1 : 0);
