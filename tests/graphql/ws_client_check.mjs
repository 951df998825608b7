// The reference graphql-transport-ws client (the `graphql-ws` package) against
// `cutoff graphql serve`: a subscription streams its events, an event that overruns its own
// budget arrives cut (DEADLINE_EXCEEDED at its path) while the next one still comes, a query
// works over the socket, a validation error is reported as an error, and unsubscribing
// cancels the event being executed (the server's metrics count it).
//
//   node tests/graphql/ws_client_check.mjs --cutoff build/bin/cutoff
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { metric, startService } from '../support/service.mjs';

const { values } = parseArgs({ options: { cutoff: { type: 'string' }, help: { type: 'boolean' } } });
if (values.help || !values.cutoff) {
  console.log('usage: node tests/graphql/ws_client_check.mjs --cutoff PATH_TO_CUTOFF');
  process.exit(values.help ? 0 : 2);
}
const scale = Number(process.env.CUTOFF_TEST_TIME_SCALE ?? 1);
const dir = mkdtempSync(join(tmpdir(), 'cutoff-ws-'));
writeFileSync(join(dir, 'schema.graphql'), `
  type Query { hello: String }
  type Subscription { ticks: Tick, stuck: Tick }
  type Tick { n: Int, slow: Int }
`);
writeFileSync(join(dir, 'fixture.json'), JSON.stringify({
  hello: 'world',
  ticks: { $interval_ms: 30, $events: [{ n: 1, slow: 1 }, { n: 2, slow: { $delay_ms: 10000, $value: 2 } },
                                         { n: 3, slow: 3 }] },
  stuck: { $events: [{ n: 1, slow: { $hang: true } }] },
}));
const svc = await startService(values.cutoff, ['graphql', 'serve', '--quiet', '--event-budget-ms', String(200 * scale),
  '--schema', join(dir, 'schema.graphql'), '--fixture', join(dir, 'fixture.json')]);
const client = createClient({ url: svc.url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, lazy: false,
                              retryAttempts: 0 });
let failed = false;
try {
  // 1. A subscription: three events, the second cut at its own budget.
  const events = [];
  const started = performance.now();
  for await (const result of client.iterate({ query: 'subscription { ticks { n slow } }' })) events.push(result);
  const took = performance.now() - started;
  assert.equal(events.length, 3);
  assert.deepEqual(events[0], { data: { ticks: { n: 1, slow: 1 } } });
  assert.deepEqual(events[1].data, { ticks: { n: 2, slow: null } });
  assert.equal(events[1].errors[0].extensions.code, 'DEADLINE_EXCEEDED');
  assert.deepEqual(events[1].errors[0].path, ['ticks', 'slow']);
  assert.deepEqual(events[2], { data: { ticks: { n: 3, slow: 3 } } });
  assert.ok(took < 2000 * scale, `the stream took ${took} ms`);
  console.log(`ok   subscription: 3 events in ${Math.round(took)} ms, the slow one cut at its own budget`);

  // 2. A query over the socket, and a validation error.
  const [hello] = await collect(client.iterate({ query: '{ hello }' }));
  assert.deepEqual(hello, { data: { hello: 'world' } });
  await assert.rejects(collect(client.iterate({ query: '{ nope }' })), (e) => Array.isArray(e) && /nope/.test(e[0].message));
  console.log('ok   query and validation error over the socket');

  // 3. Unsubscribing cancels the event being executed.
  const series = 'cutoff_graphql_field_stopped_total{operation="anonymous",field="stuck.slow",reason="cancelled"}';
  const it = client.iterate({ query: 'subscription { stuck { n slow } }' });
  const pending = it.next();
  await new Promise((r) => setTimeout(r, 100));
  const unsubscribed = performance.now();
  await it.return();
  let lag;
  for (;;) {
    const text = await (await fetch(svc.url + '/metrics')).text();
    lag = performance.now() - unsubscribed;
    if (metric(text, series) >= 1) break;
    assert.ok(lag < 1000 * scale, 'the executing event was not cancelled');
    await new Promise((r) => setTimeout(r, 2));
  }
  void pending;
  console.log(`ok   unsubscribing cancelled the executing event within ${Math.round(lag)} ms`);
} catch (e) {
  failed = true;
  console.log(`FAIL ${e.stack ?? JSON.stringify(e)}`);
} finally {
  await client.dispose();
  await svc.stop();
}
process.exit(failed ? 1 : 0);

async function collect(iterable) {
  const out = [];
  for await (const v of iterable) out.push(v);
  return out;
}
