// cutoff's gRPC server and client against an independent implementation, @grpc/grpc-js:
//   1. a grpc-js client's deadline reaches a `cutoff grpc relay` handler, and the PostgreSQL
//      statement behind it is gone from pg_stat_activity right after the deadline;
//   2. a grpc-js client's cancel reaches the handler as `cancelled` within milliseconds, and a
//      deadline centuries away (grpc-timeout in hours) is the service maximum, not a spent budget;
//   3. `cutoff grpc call` against a grpc-js server: the server receives the remaining budget as
//      its deadline (grpc-timeout), and sees the call cancelled within milliseconds of the
//      caller's stop, at the budget's end and on Ctrl-C;
//   4. a chain of relays A -> B -> C: the deadline at A stops B and C within milliseconds.
// Messages are raw bytes on both sides (no .proto needed).
//
//   node tests/grpc/grpc_interop_check.mjs --cutoff build/bin/cutoff --db-url-file build/postgres-test/url
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import grpc from '@grpc/grpc-js';
import { runChild, spawnChild } from '../support/children.mjs';
import { startService } from '../support/service.mjs';

const { values } = parseArgs({
  options: {
    cutoff: { type: 'string' }, db: { type: 'string' }, 'db-url-file': { type: 'string' },
    'time-scale': { type: 'string' }, help: { type: 'boolean' },
  },
});
if (values.help || !values.cutoff || !(values.db || values['db-url-file'])) {
  console.log('usage: node tests/grpc/grpc_interop_check.mjs --cutoff PATH (--db URL | --db-url-file FILE) [--time-scale N]');
  process.exit(values.help ? 0 : 2);
}
const db = values.db ?? readFileSync(values['db-url-file'], 'utf8').trim();
const scale = Number(values['time-scale'] ?? process.env.CUTOFF_TEST_TIME_SCALE ?? 1);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const raw = { requestSerialize: (b) => b, requestDeserialize: (b) => b, responseSerialize: (b) => b, responseDeserialize: (b) => b };

// A connected client: the connection is made before any timed call, so it costs no budget.
async function connected(Ctor, target) {
  const client = new Ctor(target, grpc.credentials.createInsecure());
  await new Promise((resolve, reject) => client.waitForReady(Date.now() + 10000, (e) => (e ? reject(e) : resolve())));
  return client;
}

const RelayClient = grpc.makeGenericClientConstructor({
  Work: { path: '/cutoff.relay.v1.Relay/Work', requestStream: false, responseStream: false, ...raw },
}, 'Relay');

// How many statements carrying `marker` are running on the server right now.
async function running(marker) {
  const r = await runChild(values.cutoff, ['sql', 'exec', '--db', db, '--budget-ms', '5000',
    `select count(*) as n from pg_stat_activity where state = 'active' and query like '%${marker}%' and pid <> pg_backend_pid()`]);
  assert.equal(r.status, 0, `sql exec failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n')[0]).n;
}

// 1. The deadline reaches the handler, and the statement ends with it.
{
  const marker = `interop_${process.pid}_deadline`;
  const relay = await startService(values.cutoff, ['grpc', 'relay', '--name', 'R', '--db', db,
    '--sql', `select pg_sleep(30) /* ${marker} */`]);
  const client = await connected(RelayClient, relay.url.replace(/^grpc:\/\//, ''));
  const budget = 800 * scale;
  const started = Date.now();
  const done = new Promise((resolve) => {
    client.Work(Buffer.alloc(0), { deadline: new Date(started + budget) }, (err) => resolve({ err, at: Date.now() }));
  });
  let during = 0;  // the statement starts once the relay has a connection
  while (during === 0 && Date.now() < started + budget * 0.7) {
    during = await running(marker);
    if (during === 0) await sleep(20);
  }
  assert.equal(during, 1, 'the statement runs while the budget lasts');
  const { err, at } = await done;
  assert.equal(err?.code, grpc.status.DEADLINE_EXCEEDED, `expected DEADLINE_EXCEEDED, got ${err?.code} ${err?.details}`);
  let left = -1;
  for (let i = 0; i < 20; ++i) {  // checked at once; a short wait only for the check's own start
    left = await running(marker);
    if (left === 0) break;
    await sleep(25);
  }
  assert.equal(left, 0, 'the statement is gone from pg_stat_activity after the deadline');
  console.log(`1. grpc-js deadline ${budget} ms: DEADLINE_EXCEEDED after ${at - started} ms; statement gone at ${Date.now() - started} ms`);
  let line;  // the line comes through a pipe: it may trail the client's answer
  for (let i = 0; i < 100 && !line; ++i) {
    line = relay.logLines().find((l) => l.operation === '/cutoff.relay.v1.Relay/Work');
    if (!line) await sleep(10);
  }
  assert.ok(line, `a log line for the call: ${relay.stderr()}`);
  assert.equal(line.outcome, 'deadline_exceeded');
  assert.ok(line.budget_ms <= budget && line.budget_ms > budget - 250 * scale, `budget received: ${line.budget_ms}`);
  client.close();
  await relay.stop();
}

// 2. A cancel reaches the handler as `cancelled`.
{
  const relay = await startService(values.cutoff, ['grpc', 'relay', '--name', 'R', '--work-ms', '10000']);
  const client = await connected(RelayClient, relay.url.replace(/^grpc:\/\//, ''));
  const started = Date.now();
  const call = client.Work(Buffer.alloc(0), { deadline: new Date(started + 10000) }, () => {});
  await sleep(200 * scale);
  const cancelledAt = Date.now();
  call.cancel();
  let line;
  for (let i = 0; i < 100 && !line; ++i) {
    line = relay.logLines().find((l) => l.operation === '/cutoff.relay.v1.Relay/Work');
    if (!line) await sleep(10);
  }
  assert.ok(line, `the handler ended after the cancel: ${relay.stderr()}`);
  assert.equal(line.outcome, 'cancelled');
  const ran = line.used_ms;
  assert.ok(ran < cancelledAt - started + 150 * scale, `the handler ran ${ran} ms; cancelled at ${cancelledAt - started} ms`);
  console.log(`2. grpc-js cancel at ${cancelledAt - started} ms: the handler ended as cancelled after ${ran.toFixed(1)} ms`);
  client.close();
  await relay.stop();
}

// 2b. A deadline centuries away (grpc-js sends it in hours, as the spec allows) is a long
// budget, capped by the service maximum: never read as one already spent.
{
  const relay = await startService(values.cutoff, ['grpc', 'relay', '--name', 'R', '--max-budget-ms', '20000']);
  const client = await connected(RelayClient, relay.url.replace(/^grpc:\/\//, ''));
  for (const years of [1, 300, 11000]) {
    const reply = await new Promise((resolve, reject) => client.Work(Buffer.alloc(0),
      { deadline: new Date(Date.now() + years * 365 * 86400e3) }, (e, v) => (e ? reject(e) : resolve(v))));
    const budget = JSON.parse(reply.toString()).budget_ms;
    assert.ok(budget > 19000 && budget <= 20000, `a deadline ${years} years away: budget ${budget} ms`);
  }
  console.log('2b. grpc-js deadlines 1, 300 and 11,000 years away: each the service maximum, 20 s');
  client.close();
  await relay.stop();
}

// 3. cutoff's client against a grpc-js server.
{
  const seen = [];
  const server = new grpc.Server();
  server.addService({ Slow: { path: '/interop.Probe/Slow', requestStream: false, responseStream: false, ...raw } }, {
    Slow(call) {  // never answers: only the caller's stop ends the call
      const arrived = Date.now();
      const record = { arrived, remaining: call.getDeadline() - arrived, cancelledAt: null };
      seen.push(record);
      call.on('cancelled', () => { record.cancelledAt = Date.now(); });
    },
  });
  const port = await new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(),
    (err, p) => (err ? reject(err) : resolve(p))));
  const target = `127.0.0.1:${port}`;

  const budget = 600 * scale;
  const started = Date.now();
  const r = await runChild(values.cutoff, ['grpc', 'call', target, '/interop.Probe/Slow', '--budget-ms', String(budget), '--read']);
  const ended = Date.now();
  assert.equal(r.status, 6, `exit 6 (deadline_exceeded), got ${r.status}: ${r.stderr}`);
  assert.equal(seen.length, 1);
  const budgetCall = seen[0];
  // What the server received is the budget less the time to start a process and connect.
  assert.ok(budgetCall.remaining <= budget && budgetCall.remaining > budget - 300 * scale,
    `grpc-timeout received: ${budgetCall.remaining} ms of ${budget}`);
  for (let i = 0; i < 50 && budgetCall.cancelledAt === null; ++i) await sleep(10);
  assert.notEqual(budgetCall.cancelledAt, null, 'the server saw the call end');
  const atDeadline = budgetCall.cancelledAt - (budgetCall.arrived + budgetCall.remaining);
  assert.ok(Math.abs(atDeadline) < 100 * scale, `cancelled ${atDeadline} ms from the deadline`);
  console.log(`3a. cutoff grpc call --budget-ms ${budget}: the server received ${budgetCall.remaining} ms, ` +
    `saw the cancel ${atDeadline} ms from the deadline; exit 6 after ${ended - started} ms`);

  // Ctrl-C: the caller's own stop, well before its deadline.
  const child = spawnChild(values.cutoff, ['grpc', 'call', target, '/interop.Probe/Slow', '--budget-ms', '20000', '--read'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  for (let i = 0; i < 500 && seen.length < 2; ++i) await sleep(10);
  assert.equal(seen.length, 2, 'the second call arrived');
  await sleep(100);
  const interruptedAt = Date.now();
  child.kill('SIGINT');
  const code = await exited;
  assert.equal(code, 130, `exit 130 after SIGINT, got ${code}`);
  for (let i = 0; i < 50 && seen[1].cancelledAt === null; ++i) await sleep(10);
  assert.notEqual(seen[1].cancelledAt, null, 'the server saw the call end');
  const afterStop = seen[1].cancelledAt - interruptedAt;
  assert.ok(afterStop < 150 * scale, `the server saw the cancel ${afterStop} ms after SIGINT`);
  console.log(`3b. Ctrl-C on cutoff grpc call: the grpc-js server saw the cancel ${afterStop} ms later; exit 130`);
  server.forceShutdown();
}
// 4. A chain of relays, A -> B -> C: a grpc-js client's deadline at A stops B and C within
// milliseconds, not when C's own work (10 s) would have ended.
{
  const c = await startService(values.cutoff, ['grpc', 'relay', '--name', 'C', '--work-ms', '10000']);
  const b = await startService(values.cutoff, ['grpc', 'relay', '--name', 'B', '--work-ms', '50',
    '--next', c.url.replace(/^grpc:\/\//, '')]);
  const a = await startService(values.cutoff, ['grpc', 'relay', '--name', 'A', '--work-ms', '50',
    '--next', b.url.replace(/^grpc:\/\//, '')]);
  const client = await connected(RelayClient, a.url.replace(/^grpc:\/\//, ''));
  const budget = 500 * scale;
  const started = Date.now();
  const err = await new Promise((resolve) => {
    client.Work(Buffer.alloc(0), { deadline: new Date(started + budget) }, (e) => resolve(e));
  });
  assert.equal(err?.code, grpc.status.DEADLINE_EXCEEDED);
  const lines = {};
  for (let i = 0; i < 200 && Object.keys(lines).length < 3; ++i) {
    for (const [name, svc] of [['A', a], ['B', b], ['C', c]]) {
      const line = svc.logLines().find((l) => l.operation === '/cutoff.relay.v1.Relay/Work');
      if (line) lines[name] = { ...line, seenAt: Date.now() - started };
    }
    if (Object.keys(lines).length < 3) await sleep(5);
  }
  assert.deepEqual(Object.keys(lines).sort(), ['A', 'B', 'C'], 'every hop ended its call');
  assert.ok(lines.A.budget_ms > lines.B.budget_ms && lines.B.budget_ms > lines.C.budget_ms,
    `budgets shrink per hop: ${lines.A.budget_ms} ${lines.B.budget_ms} ${lines.C.budget_ms}`);
  for (const name of ['B', 'C']) {
    assert.ok(['deadline_exceeded', 'cancelled'].includes(lines[name].outcome), `${name}: ${lines[name].outcome}`);
    assert.ok(lines[name].used_ms < budget + 100 * scale, `${name} ran ${lines[name].used_ms} ms of a ${budget} ms budget`);
  }
  console.log(`4. chain A -> B -> C, ${budget} ms at A: budgets ${lines.A.budget_ms}/${lines.B.budget_ms}/${lines.C.budget_ms} ms; ` +
    `C ended ${lines.C.outcome} after ${lines.C.used_ms.toFixed(1)} ms (its work: 10 s)`);
  client.close();
  for (const svc of [a, b, c]) await svc.stop();
}
console.log('grpc interop: ok');
