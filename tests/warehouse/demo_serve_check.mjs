// `cutoff demo serve` end to end: the reference warehouse services in one process, on SQLite.
//
// - The gateway answers the warehouse query within its budget; stockValuation is cut by its
//   @budget cap for the big warehouses (DEADLINE_EXCEEDED at the field's path) and answered for
//   the small ones, and the bins are there: a partial response.
// - reserveStock with an idempotency key reserves once: the repeat returns the stored answer
//   (replayed: true) and the bin's stock moved once.
// - An empty idempotency key is refused (BAD_USER_INPUT), and reserves nothing however often.
// - A query with 3,000 aliases gets OVERLOADED (or DEADLINE_EXCEEDED) at the fields over the
//   gateway's fan-out limits, never a transport error; a cheap query meanwhile answers quickly.
// - The stockChanged subscription (graphql-transport-ws) delivers a reservation as it happens.
// - GraphiQL is served at /graphiql; both services serve /metrics.
// - Orders run the saga across the inventory and the shipping service: a booked order, a
//   refused one (reservation released), one whose caller hangs up mid-booking (step_ambiguous,
//   the reservation kept) that `cutoff saga resume` completes; `cutoff saga list/show` read the
//   journal; /openapi.json and /mcp on the inventory list the warehouse's operations with their
//   budgets.
// - SIGINT stops both cleanly (exit 0).
// - With --tls-cert/--tls-key/--ca-file both services serve https:// and the gateway calls the
//   inventory over TLS: the same partial response, the inventory's calls counted.
// - With --inventory-transport grpc the gateway calls the inventory over gRPC: the same partial
//   response and idempotent reservation, counted by the inventory's gRPC server; with
//   --shipping-transport grpc an order books its shipment over gRPC.
//
//   node tests/warehouse/demo_serve_check.mjs --cutoff build/bin/cutoff
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { metric, startService } from '../support/service.mjs';
import { httpsRequest, removeCa, throwawayCa } from '../support/tls.mjs';

const { values } = parseArgs({ options: { cutoff: { type: 'string' } } });
if (!values.cutoff) {
  console.error('usage: demo_serve_check.mjs --cutoff PATH');
  process.exit(2);
}
// Instrumented builds (make asan, make tsan) run everything several times slower: the budgets
// and bounds below grow with CUTOFF_TEST_TIME_SCALE, as the unit tests' do, so that what is
// checked (the big valuations cut, the small ones answered) stays what happens.
const scale = Math.max(1, Number(process.env.CUTOFF_TEST_TIME_SCALE) || 1);
const ms = (n) => String(Math.round(n * scale));
const dir = mkdtempSync(join(tmpdir(), 'cutoff-demo-serve-'));
// A connection for each of the query's 16 calls (8 valuations, 8 bins): with fewer, which
// small valuation waits behind which big one depends on the order the calls reach the pool,
// and on a busy machine a small one could wait past its cap.
const svc = await startService(values.cutoff, ['demo', 'serve', '--db', `sqlite:${join(dir, 'warehouse.db')}`,
  '--inventory-port', '0', '--inventory-grpc-port', '0', '--shipping-port', '0', '--shipping-grpc-port', '0', '--shipping-db', `sqlite:${join(dir, 'shipping.db')}`, '--valuation-ms', ms(400), '--valuation-cap-ms', ms(150), '--operation-budget-ms', ms(1500),
  '--pool-size', '16', '--shipping-booking-ms', ms(1000)],
{ timeoutMs: 180_000 });
const inventory = /inventory (http:\/\/[^/ ]+)/.exec(svc.stdout())[1];
const shipping = /shipping +(http:\/\/[^/ ]+)/.exec(svc.stdout())[1];
const db = `sqlite:${join(dir, 'warehouse.db')}`;

async function graphql(query, variables) {
  const r = await fetch(svc.url + '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables }),
  });
  return { status: r.status, body: await r.json() };
}

let failed = false;
try {
  // 1. A partial response: big valuations cut by their cap, the small ones and the bins there.
  // A first run opens the gateway's 16 connections to the inventory and the inventory's 16 to
  // the database; on a busy machine that alone can push a small valuation past its cap. What
  // is checked is the second run, on warm connections.
  const warm = await graphql('{ warehouses { id name stockValuation bins(first: 2) { id qty } } }');
  assert.equal(warm.status, 200);
  const started = performance.now();
  const { status, body } = await graphql('{ warehouses { id name stockValuation bins(first: 2) { id qty } } }');
  const took = performance.now() - started;
  assert.equal(status, 200);
  assert.equal(body.data.warehouses.length, 8);
  const cut = body.errors.filter((e) => e.extensions.code === 'DEADLINE_EXCEEDED').map((e) => e.path.join('.'));
  assert.ok(cut.includes('warehouses.0.stockValuation'), `warehouse 1's valuation is cut: ${JSON.stringify(body.errors)}`);
  assert.equal(body.data.warehouses[0].stockValuation, null);
  assert.equal(typeof body.data.warehouses[3].stockValuation, 'number', 'the smallest warehouse is valued');
  assert.ok(body.data.warehouses.every((w) => w.bins && w.bins.length === 2), 'every warehouse has its bins');
  assert.ok(took < 1500 * scale, `answered within the operation budget (${Math.round(took)} ms)`);
  console.log(`ok   partial response in ${Math.round(took)} ms: cut ${cut.join(', ')}`);

  // 2. A subscription sees the reservation; the reservation is idempotent.
  const client = createClient({ url: svc.url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket,
    lazy: false, retryAttempts: 0 });
  const changes = client.iterate({ query: 'subscription { stockChanged(binId: 7) { binId qty reserved } }' });
  const next = changes.next();
  await new Promise((r) => setTimeout(r, 500));  // the subscription's first poll learns where the feed is
  const reserve = 'mutation($k: String!) { reserveStock(binId: 7, qty: 3, idempotencyKey: $k) { binId qty reserved replayed } }';
  const first = await graphql(reserve, { k: 'demo-check-1' });
  const again = await graphql(reserve, { k: 'demo-check-1' });
  assert.equal(first.body.errors, undefined, JSON.stringify(first.body));
  assert.equal(first.body.data.reserveStock.replayed, false);
  assert.equal(again.body.data.reserveStock.replayed, true);
  assert.equal(again.body.data.reserveStock.reserved, first.body.data.reserveStock.reserved);
  const bin = await (await fetch(`${inventory}/bin?id=7`)).json();
  assert.equal(bin.reserved, first.body.data.reserveStock.reserved, 'the stock moved once');
  console.log(`ok   reserveStock twice with one key: reserved ${bin.reserved} once, the repeat replayed`);
  const event = await Promise.race([next, new Promise((_, reject) => setTimeout(() => reject(new Error('no stockChanged event')), 5000 * scale))]);
  assert.deepEqual(event.value.data.stockChanged, { binId: '7', qty: first.body.data.reserveStock.qty,
    reserved: first.body.data.reserveStock.reserved });
  await changes.return();
  await client.dispose();
  console.log('ok   stockChanged delivered the reservation');

  // 2b. An empty key is refused, every time; the stock does not move.
  for (let i = 0; i < 20; i++) {
    const r = await graphql(reserve, { k: '' });
    assert.equal(r.body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', JSON.stringify(r.body));
    assert.deepEqual(r.body.errors[0].path, ['reserveStock']);
  }
  const after = await (await fetch(`${inventory}/bin?id=7`)).json();
  assert.equal(after.reserved, bin.reserved, 'an empty key reserved nothing');
  console.log('ok   reserveStock with an empty key: BAD_USER_INPUT 20 times, nothing reserved');

  // 2c. Fan-out: 3,000 aliases in one query.
  let hostile = '{';
  for (let i = 0; i < 3000; i++) hostile += ` a${i}: warehouses { id }`;
  hostile += ' }';
  const big = graphql(hostile);
  let slowest = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const cheap = await graphql('{ bin(id: 7) { id } }');
    slowest = Math.max(slowest, performance.now() - t0);
    assert.equal(cheap.body.errors, undefined, JSON.stringify(cheap.body));
  }
  const answer = await big;
  const codes = new Set(answer.body.errors.map((e) => e.extensions.code));
  assert.ok(answer.body.errors.every((e) => e.path?.length > 0), 'every error has a path');
  assert.ok([...codes].every((c) => c === 'OVERLOADED' || c === 'DEADLINE_EXCEEDED'), `codes: ${[...codes]}`);
  assert.ok(codes.has('OVERLOADED'), 'the excess is OVERLOADED');
  assert.ok(!JSON.stringify(answer.body).includes('partial message'));
  assert.ok(slowest < 750 * scale, `a cheap query meanwhile answered in ${Math.round(slowest)} ms`);
  console.log(`ok   3,000 aliases: ${answer.body.errors.length} fields ${[...codes].join('/')}; a cheap query meanwhile in ${Math.round(slowest)} ms at worst`);

  // 2d. Orders: a saga across the inventory and the shipping service.
  const order = (key, body, signal) => fetch(`${inventory}/orders`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body), signal,
  });
  const placed = await order('check-order-1', { binId: 11, qty: 2, destination: 'Lyon' });
  assert.equal(placed.status, 200, await placed.clone().text());
  assert.equal((await placed.json()).state, 'completed');
  const refused = await order('check-order-2', { binId: 12, qty: 30, destination: 'Lyon' });
  assert.equal(refused.status, 400);
  assert.match(await refused.text(), /a shipment holds at most 20 items/);
  assert.equal((await (await fetch(`${inventory}/bin?id=12`)).json()).reserved, 0, 'the refused order released its stock');
  // The caller hangs up while the shipment is being booked.
  const abort = new AbortController();
  const hungUp = order('check-order-3', { binId: 13, qty: 1, destination: 'Lyon' }, abort.signal).catch(() => null);
  await new Promise((r) => setTimeout(r, 300 * scale));
  abort.abort();
  await hungUp;
  let journal;
  for (let i = 0; i < 100; i++) {
    journal = await (await fetch(`${inventory}/orders?id=check-order-3`)).json();
    if (journal.state !== 'running') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(journal.state, 'step_ambiguous', JSON.stringify(journal));
  assert.equal(journal.failed_step, 'ship');
  assert.equal((await (await fetch(`${inventory}/bin?id=13`)).json()).reserved, 1, 'the reservation is kept, not released on a guess');
  const cli = (args) => spawnSync(values.cutoff, ['saga', ...args, '--db', db], { encoding: 'utf8' });
  const listed = cli(['list', '--unfinished']);
  assert.equal(listed.status, 0, listed.stderr);
  assert.match(listed.stdout, /check-order-3 +warehouse\.order +step_ambiguous +step 1\/2 +at ship/);
  const shown = cli(['show', 'check-order-3']);
  assert.match(shown.stdout, /next +cutoff saga resume check-order-3/);
  let resumed;
  for (let i = 0; i < 20; i++) {  // until shipping has rolled the cut booking back and freed its key
    resumed = cli(['resume', 'check-order-3', '--shipping-url', shipping]);
    if (resumed.status === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(resumed.status, 0, resumed.stderr);
  assert.match(resumed.stdout, /check-order-3 \(warehouse\.order\): completed/);
  const shipped = await fetch(`${shipping}/shipments?order=check-order-3`);
  assert.equal(shipped.status, 200, 'resume booked the shipment');
  const missing = cli(['show', 'no-such-order']);
  assert.equal(missing.status, 1);
  console.log('ok   orders: booked, refused (released), hung up mid-booking (step_ambiguous, kept), resumed from the CLI');

  // 2e. The warehouse's operations on the inventory: OpenAPI and MCP with their budgets.
  const openapi = await (await fetch(`${inventory}/openapi.json`)).json();
  assert.equal(openapi.paths['/ops/warehouse.order'].post['x-deadline-seconds'], 3);
  const mcp = await fetch(`${inventory}/mcp`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'check', version: '1' } } }),
  });
  const session = mcp.headers.get('mcp-session-id');
  assert.ok(session, 'an MCP session');
  const tools = await (await fetch(`${inventory}/mcp`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  })).json();
  const orderTool = tools.result.tools.find((t) => t.name === 'warehouse.order');
  assert.match(orderTool.description, /Time budget: 3 s\./);
  console.log(`ok   /openapi.json and /mcp list the warehouse's ${tools.result.tools.length} operations with their budgets`);

  // 3. GraphiQL and the metrics of both services.
  const page = await fetch(svc.url + '/graphiql');
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('content-encoding'), 'gzip', 'GraphiQL is sent compressed');  // fetch accepts gzip
  const html = await page.text();
  assert.match(html, /graphiql/i);
  // The example a first visit opens with is the warehouse's own, and it runs as the page says.
  const example = /data-example="([^"]*)"/.exec(html)?.[1]?.replace(/&quot;/g, '"').replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  assert.ok(example && example.includes('stockValuation'), `the warehouse example: ${example}`);
  const tried = await graphql(example);
  assert.ok(tried.body.data.warehouses.length > 0, 'the example answers');
  assert.ok(tried.body.errors.some((e) => e.extensions.code === 'DEADLINE_EXCEEDED' && e.path.at(-1) === 'stockValuation'),
            `the example shows the valuation cut: ${JSON.stringify(tried.body.errors)}`);
  console.log(`ok   GraphiQL gzip-compressed, opening with the warehouse example (valuation cut, the rest answered)`);
  for (const [name, base] of [['gateway', svc.url], ['inventory', inventory]]) {
    const text = await (await fetch(base + '/metrics')).text();
    assert.match(text, /^cutoff_http_requests_total/m, `${name} /metrics`);
  }
  assert.match(await (await fetch(inventory + '/metrics')).text(), /^cutoff_pool_/m, 'the inventory pool gauges');
  console.log('ok   GraphiQL at /graphiql, /metrics on both services');
} catch (e) {
  failed = true;
  console.log(`FAIL ${e.stack ?? JSON.stringify(e)}`);
}

// 4. Ctrl-C.
svc.child.kill('SIGINT');
const exit = await Promise.race([svc.exited, new Promise((r) => setTimeout(() => r({ code: 'timeout' }), 10_000 * scale))]);
if (exit.code !== 0) {
  failed = true;
  console.log(`FAIL SIGINT: exit ${JSON.stringify(exit)}; stderr:\n${svc.stderr()}`);
} else {
  console.log('ok   SIGINT stops both services (exit 0)');
}
// 5. The same services over TLS: the gateway serves https:// and reaches the inventory over
// https://, trusting the run's CA.
const tls = throwawayCa();
try {
  const secure = await startService(values.cutoff, ['demo', 'serve', '--db', `sqlite:${join(dir, 'warehouse.db')}`,
    '--inventory-port', '0', '--inventory-grpc-port', '0', '--shipping-port', '0', '--shipping-grpc-port', '0', '--shipping-db', `sqlite:${join(dir, 'shipping.db')}`, '--valuation-ms', ms(400), '--valuation-cap-ms', ms(150),
    '--operation-budget-ms', ms(1500), '--pool-size', '16',
    '--tls-cert', tls.cert, '--tls-key', tls.key, '--ca-file', tls.ca], { timeoutMs: 180_000 });
  try {
    assert.ok(secure.url.startsWith('https://'), secure.url);
    const secureInventory = /inventory (https:\/\/[^/ ]+)/.exec(secure.stdout())?.[1];
    assert.ok(secureInventory, `the inventory serves https://: ${secure.stdout()}`);
    const r = await httpsRequest(secure.url + '/graphql', {
      ca: tls.ca, method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ warehouses { id stockValuation bins(first: 1) { id } } }' }) });
    assert.equal(r.status, 200, r.body);
    const body = JSON.parse(r.body);
    assert.equal(body.data.warehouses.length, 8);
    assert.ok(body.errors.some((e) => e.extensions.code === 'DEADLINE_EXCEEDED' && e.path.at(-1) === 'stockValuation'),
              `a valuation cut by its cap over TLS: ${r.body.slice(0, 300)}`);
    assert.ok(body.data.warehouses.every((w) => w.bins.length === 1), 'every warehouse has its bins');
    const gw = (await httpsRequest(secure.url + '/metrics', { ca: tls.ca })).body;
    assert.ok(metric(gw, 'cutoff_resilience_attempts_total{name="inventory"}') >= 16, 'the gateway called the inventory');
    const inv = (await httpsRequest(secureInventory + '/metrics', { ca: tls.ca })).body;
    // A valuation call stopped at its cap while its new connection was still in the TLS
    // handshake closes it there, which the inventory counts as a failed handshake (seen once on
    // a loaded machine). Any failure beyond those calls would be the gateway distrusting the
    // inventory, which the bins above rule out too.
    const cut = body.errors.filter((e) => e.extensions.code === 'DEADLINE_EXCEEDED').length;
    const failedHandshakes = metric(inv, 'cutoff_http_bad_requests_total{reason="tls_handshake_failed"}');
    assert.ok(failedHandshakes <= cut, `${failedHandshakes} failed TLS handshakes at the inventory, ${cut} calls cut`);
    console.log('ok   over TLS: the gateway serves https:// and calls the inventory over https://, same partial answer');
  } finally {
    await secure.stop();
  }
} catch (e) {
  failed = true;
  console.log(`FAIL over TLS: ${e.stack ?? JSON.stringify(e)}`);
} finally {
  removeCa(tls);
}
// 6. --inventory-transport grpc: the gateway reaches the inventory over gRPC; the same partial
// answer, the same idempotent reservation, the calls counted by the inventory's gRPC server.
try {
  const viaGrpc = await startService(values.cutoff, ['demo', 'serve', '--db', `sqlite:${join(dir, 'warehouse.db')}`,
    '--inventory-port', '0', '--inventory-grpc-port', '0', '--shipping-port', '0', '--shipping-grpc-port', '0', '--shipping-db', `sqlite:${join(dir, 'shipping.db')}`, '--inventory-transport', 'grpc',
    '--shipping-transport', 'grpc',
    '--valuation-ms', ms(400), '--valuation-cap-ms', ms(150), '--operation-budget-ms', ms(1500), '--pool-size', '16'],
  { timeoutMs: 180_000 });
  try {
    assert.match(viaGrpc.stdout(), /inventory grpc:\/\/[^ ]+ .*over grpc/, viaGrpc.stdout());
    const grpcInventory = /inventory (http:\/\/[^/ ]+)/.exec(viaGrpc.stdout())[1];
    const post = async (query, variables) => {
      const r = await fetch(viaGrpc.url + '/graphql', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }) });
      return r.json();
    };
    await post('{ warehouses { id stockValuation bins(first: 2) { id } } }');  // warms the channel and the pool
    const body = await post('{ warehouses { id stockValuation bins(first: 2) { id } } }');
    assert.equal(body.data.warehouses.length, 8);
    assert.equal(body.data.warehouses[0].stockValuation, null, 'warehouse 1 is cut');
    assert.ok(body.errors.some((e) => e.extensions.code === 'DEADLINE_EXCEEDED' &&
      e.path.join('.') === 'warehouses.0.stockValuation'), JSON.stringify(body.errors));
    assert.equal(typeof body.data.warehouses[3].stockValuation, 'number', 'the smallest warehouse is valued');
    assert.ok(body.data.warehouses.every((w) => w.bins.length === 2), 'every warehouse has its bins');
    const reserve = 'mutation($k: String!) { reserveStock(binId: 9, qty: 2, idempotencyKey: $k) { reserved replayed } }';
    const first = await post(reserve, { k: 'demo-grpc-1' });
    const again = await post(reserve, { k: 'demo-grpc-1' });
    assert.equal(first.data.reserveStock.replayed, false, JSON.stringify(first));
    assert.equal(again.data.reserveStock.replayed, true, JSON.stringify(again));
    const missing = await post('{ bin(id: 999999) { id } }');
    assert.equal(missing.data.bin, null, `a missing bin is null over gRPC too: ${JSON.stringify(missing)}`);
    const inv = await (await fetch(grpcInventory + '/metrics')).text();
    assert.ok(metric(inv, 'cutoff_grpc_server_calls_total{method="/cutoff.warehouse.v1.Inventory/GetValuation",code="OK"}') >= 1,
      'the valuations came over gRPC');
    assert.ok(metric(inv, 'cutoff_grpc_server_calls_total{method="/cutoff.warehouse.v1.Inventory/Reserve",code="OK"}') >= 2,
      'the reservations came over gRPC');
    assert.ok(!/^cutoff_http_requests_total\{route="inventory\.(valuation|reserve)"/m.test(inv),
      'no valuation or reservation came over HTTP');
    console.log('ok   --inventory-transport grpc: the same partial answer and idempotent reservation, over gRPC');
    // --shipping-transport grpc: the order saga books over gRPC.
    const ordered = await fetch(`${grpcInventory}/orders`, { method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'check-grpc-order' },
      body: JSON.stringify({ binId: 14, qty: 1, destination: 'Brest' }) });
    assert.equal(ordered.status, 200, await ordered.clone().text());
    assert.equal((await ordered.json()).shipment.destination, 'Brest');
    assert.match(viaGrpc.stdout(), /shipping grpc:\/\/[^ ]+ .*orders book over grpc/, viaGrpc.stdout());
    console.log('ok   --shipping-transport grpc: an order booked its shipment over gRPC');
  } finally {
    await viaGrpc.stop();
  }
} catch (e) {
  failed = true;
  console.log(`FAIL over gRPC: ${e.stack ?? JSON.stringify(e)}`);
}
process.exit(failed ? 1 : 0);
