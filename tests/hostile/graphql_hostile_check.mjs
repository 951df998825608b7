// Hostile clients against `cutoff graphql serve`: every input a scanner or an attacker would
// send, each checked three ways: the answer is a clear error for that request only, the
// server still answers another client (/healthz and a cheap query) within tens of ms while
// or right after it runs, and the process's RSS and open file descriptors return near their
// baseline. Bounded in count and time; loopback only.
//
//   node tests/hostile/graphql_hostile_check.mjs --cutoff build/bin/cutoff [--only NAME]
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { startService } from '../support/service.mjs';

const { values } = parseArgs({
  options: {
    cutoff: { type: 'string' }, only: { type: 'string' }, help: { type: 'boolean' },
    // Under AddressSanitizer and ThreadSanitizer the sanitizer's allocator keeps freed memory
    // (ASan's quarantine) and malloc_trim does not reach it, so the process cannot return to
    // its baseline RSS: the check reports it and does not fail on it (the per-case growth
    // bounds still apply). Set by CMake for sanitized builds.
    'no-rss-baseline': { type: 'boolean' },
  },
});
if (values.help || !values.cutoff) {
  console.log('usage: node tests/hostile/graphql_hostile_check.mjs --cutoff PATH_TO_CUTOFF [--only CASE] [--no-rss-baseline]');
  process.exit(values.help ? 0 : 2);
}
// Sanitizer builds run slower: latency bounds scale with it.
const scale = Number(process.env.CUTOFF_TEST_TIME_SCALE ?? 1);

const dir = mkdtempSync(join(tmpdir(), 'cutoff-hostile-'));
writeFileSync(join(dir, 'schema.graphql'), `
  type Query { hello: String items: [Item!]! item: Item slow: Int }
  type Item { id: ID! name: String next: Item tags: [String] }
`);
const items = Array.from({ length: 50 }, (_, i) => ({ id: `i${i}`, name: `item ${i}`, tags: ['a', 'b'] }));
writeFileSync(join(dir, 'fixture.json'), JSON.stringify({
  hello: 'world', items, item: { id: 'x', name: 'x', next: { id: 'y', name: 'y' } },
  slow: { $delay_ms: 200, $value: 1 },
}));

const svc = await startService(values.cutoff, ['graphql', 'serve', '--quiet', '--max-budget-ms', String(5000 * scale),
  '--schema', join(dir, 'schema.graphql'), '--fixture', join(dir, 'fixture.json')]);
const { port } = new URL(svc.url);
const pid = svc.child.pid;

// ---- what the process holds ---------------------------------------------------------------
function rssBytes() {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}
function openFds() { return readdirSync(`/proc/${pid}/fd`).length; }

// ---- clients ------------------------------------------------------------------------------------
async function post(query, { headers = {}, timeoutMs = 20000 * scale } = {}) {
  const res = await fetch(svc.url + '/graphql', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let body;
  try { body = JSON.parse(text); } catch { body = { raw: text }; }
  return { status: res.status, body, bytes: text.length };
}

// One raw HTTP exchange: writes `bytes`, returns everything the server sent until it closed
// (or `waitMs` passed).
function raw(bytes, { waitMs = 1000 * scale } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => { sock.destroy(); resolve({ text: got, closed: false }); }, waitMs);
    sock.on('data', (d) => { got += d.toString('latin1'); });
    sock.on('close', () => { clearTimeout(timer); resolve({ text: got, closed: true }); });
    sock.on('error', (e) => { clearTimeout(timer); if (got) resolve({ text: got, closed: true }); else reject(e); });
    sock.write(bytes);
  });
}

// Probes /healthz every few ms while `work` runs; returns the worst latency seen.
async function worstLatencyDuring(work) {
  let worst = 0;
  let done = false;
  const probe = (async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(svc.url + '/healthz', { signal: AbortSignal.timeout(10000 * scale) });
      await res.text();
      assert.equal(res.status, 200);
      worst = Math.max(worst, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  try {
    return { result: await work(), worst: await (async () => { done = true; await probe; return worst; })() };
  } finally {
    done = true;
    await probe.catch(() => {});
  }
}

async function stillServes() {
  const t0 = performance.now();
  const r = await post('{ hello }');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { data: { hello: 'world' } });
  return performance.now() - t0;
}

const notes = [];
function note(text) { notes.push(text); }

function codes(body) { return (body.errors ?? []).map((e) => e.extensions?.code ?? null); }

// ---- documents ----------------------------------------------------------------------------------
function deepChain(n) {
  let q = '{__type(name:"__Type"){...a0}}';
  for (let i = 0; i < n; i++) q += ` fragment a${i} on __Type{fields{type{...a${i + 1}}} ofType{...a${i + 1}}}`;
  return q + ` fragment a${n} on __Type{name}`;
}
function doublingBomb(n) {
  let q = '{__type(name:"__Type"){...f0}}';
  for (let i = 0; i < n; i++) q += ` fragment f${i} on __Type{a:ofType{...f${i + 1}} b:ofType{...f${i + 1}}}`;
  return q + ` fragment f${n} on __Type{name}`;
}
function aliases(n, field = 'hello') {
  const parts = [];
  for (let i = 0; i < n; i++) parts.push(`a${i}:${field}`);
  return `{${parts.join(' ')}}`;
}

// ---- the cases ----------------------------------------------------------------------------------
const cases = {
  async deep_fragment_chain_over_http() {
    const r = await post(deepChain(4000));
    assert.equal(r.status, 400);
    assert.deepEqual(codes(r.body), ['DEPTH_LIMIT_EXCEEDED']);
    assert.match(r.body.errors[0].message, /levels deep/);
    assert.equal(r.body.data, undefined);
  },

  async deep_fragment_chain_over_websocket() {
    const ws = new WebSocket(svc.url.replace('http', 'ws') + '/graphql', 'graphql-transport-ws');
    const messages = [];
    await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
    const got = new Promise((resolve) => ws.on('message', (m) => {
      const msg = JSON.parse(m.toString());
      messages.push(msg);
      if (msg.type === 'error' || msg.type === 'next' || msg.type === 'complete') resolve(msg);
    }));
    ws.send(JSON.stringify({ type: 'connection_init' }));
    ws.send(JSON.stringify({ type: 'subscribe', id: '1', payload: { query: deepChain(4000) } }));
    const msg = await got;
    ws.close();
    const errors = msg.type === 'error' ? msg.payload : msg.payload.errors;
    assert.deepEqual(errors.map((e) => e.extensions?.code), ['DEPTH_LIMIT_EXCEEDED'], JSON.stringify(msg));
  },

  async fragment_bomb() {
    const before = rssBytes();
    const t0 = performance.now();
    const r = await post(doublingBomb(30));
    assert.ok(performance.now() - t0 < 1000 * scale, 'refused at once');
    assert.equal(r.status, 400);
    assert.ok(['DEPTH_LIMIT_EXCEEDED', 'COST_LIMIT_EXCEEDED'].includes(codes(r.body)[0]), JSON.stringify(r.body));
    // Within the depth limit, through lists: the cost limit catches it.
    let wide = '{__type(name:"__Type"){...w0}}';
    for (let i = 0; i < 15; i++) wide += ` fragment w${i} on __Type{fields{type{...w${i + 1}}} interfaces{...w${i + 1}}}`;
    const w = await post(wide + ' fragment w15 on __Type{name}');
    assert.equal(w.status, 400);
    assert.deepEqual(codes(w.body), ['COST_LIMIT_EXCEEDED'], JSON.stringify(w.body));
    const grown = rssBytes() - before;
    assert.ok(grown < 64 << 20, `RSS grew by ${grown} bytes`);
  },

  async response_size_limit() {
    // A second server whose responses may hold 100 kB: an operation that would write about
    // 1 MB stops with one error, and the same connection goes on serving.
    const small = await startService(values.cutoff, ['graphql', 'serve', '--quiet', '--max-response-bytes', '100000',
      '--schema', join(dir, 'schema.graphql'), '--fixture', join(dir, 'fixture.json')]);
    try {
      const agent = { keepalive: true };
      const query = `{${Array.from({ length: 100 }, (_, i) => `l${i}:items{id name tags}`).join(' ')}}`;
      const res = await fetch(small.url + '/graphql', {
        method: 'POST', ...agent, body: JSON.stringify({ query }),
        headers: { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json' },
      });
      const body = await res.json();
      assert.equal(res.status, 400);
      assert.deepEqual(codes(body), ['RESPONSE_TOO_LARGE']);
      assert.equal(body.data, undefined);
      const again = await fetch(small.url + '/graphql', {
        method: 'POST', ...agent, body: JSON.stringify({ query: '{ hello }' }),
        headers: { 'Content-Type': 'application/json' },
      });
      assert.deepEqual(await again.json(), { data: { hello: 'world' } });
    } finally {
      await small.stop();
    }
    // Under the default limit (32 MiB) the same operation is answered whole.
    const whole = await post(`{${Array.from({ length: 100 }, (_, i) => `l${i}:items{id name tags}`).join(' ')}}`);
    assert.equal(whole.status, 200);
    assert.ok(whole.bytes > 200_000, String(whole.bytes));
  },

  async one_huge_operation_does_not_stall_others() {
    // 60,000 aliases: within every limit, and a lot of work for one request.
    const { result, worst } = await worstLatencyDuring(() => post(aliases(60000)));
    assert.equal(result.status, 200);
    assert.equal(Object.keys(result.body.data).length, 60000);
    note(`/healthz worst ${worst.toFixed(0)} ms during a 60,000-field operation`);
    // Without yielding it was 400-800 ms; 30-90 ms here, the margin is for a loaded CI machine.
    assert.ok(worst < 250 * scale, `/healthz took ${worst.toFixed(0)} ms while the operation ran`);
  },

  async many_distinct_large_documents() {
    const before = rssBytes();
    for (let i = 0; i < 120; i++) {
      // ~300 KB, valid and distinct: nothing a byte-bounded cache keeps for long.
      const r = await post(`query Q${i} ${aliases(30000)}`);
      assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    }
    for (let i = 0; i < 120; i++) {
      const r = await post(`query Bad${i} ${aliases(30000, 'nope')}`);
      assert.equal(r.status, 400);
    }
    await stillServes();
    const grown = rssBytes() - before;
    assert.ok(grown < 256 << 20, `RSS grew by ${(grown / 1048576).toFixed(0)} MiB`);
  },

  async forged_budget_headers() {
    for (const v of ['', '-5', '0', 'NaN', '1e309', '99999999999999999999', 'abc', '5, 6']) {
      const r = await post('{ hello }', { headers: { 'Deadline-Budget-Ms': v } });
      assert.ok([200, 504].includes(r.status), `${v}: ${r.status}`);
      if (v === '0') assert.equal(r.status, 504);
    }
    const far = await post('{ hello }', { headers: { 'X-Request-Deadline': '2999-01-01T00:00:00Z' } });
    assert.equal(far.status, 200);
    // A budget of 50 ms cuts the 200 ms field, whatever the other headers say.
    const cut = await post('{ hello slow }', { headers: { 'Deadline-Budget-Ms': '50', 'grpc-timeout': '100S' } });
    assert.deepEqual(codes(cut.body), ['DEADLINE_EXCEEDED']);
  },

  async malformed_requests() {
    const answers = await Promise.all([
      raw('GARBAGE\r\n\r\n'),
      raw('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello'),
      raw(`GET /${'a'.repeat(70000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      raw(`GET / HTTP/1.1\r\nHost: x\r\n${'X-A: b\r\n'.repeat(5000)}\r\n`),
      raw('POST /graphql HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n\r\n'),
      raw('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"query'),
      raw('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n\x00\xff\xfe{}\x00\x01\x02\x03'),
    ]);
    for (const a of answers) assert.match(a.text, /^HTTP\/1\.1 4\d\d /, JSON.stringify(a.text.slice(0, 200)));
    await stillServes();
  },

  async smuggling_and_host_rules() {
    // Body bytes that would run as a second request if the first were framed wrongly.
    const smuggled = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    for (const head of [
      `POST /graphql HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n`,
      `POST /graphql HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n`,
      `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: ${smuggled.length}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    ]) {
      const a = await raw(head + smuggled);
      assert.match(a.text, /^HTTP\/1\.1 400 /, JSON.stringify(a.text.slice(0, 120)));
      assert.equal(a.text.match(/HTTP\/1\.1 /g).length, 1, 'the smuggled request never ran');
      assert.ok(a.closed, 'closed after the refusal');
    }
    for (const req of ['GET /healthz HTTP/1.1\r\n\r\n', 'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
                       'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n']) {
      const a = await raw(req);
      assert.match(a.text, /^HTTP\/1\.1 400 /, JSON.stringify(req));
    }
  },

  async oversized_websocket_message() {
    const ws = new WebSocket(svc.url.replace('http', 'ws') + '/graphql', 'graphql-transport-ws');
    await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
    const closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
    ws.send(JSON.stringify({ type: 'connection_init' }));
    ws.send('x'.repeat(2 << 20));
    assert.equal(await closed, 1009);
  },

  async websocket_client_that_never_reads() {
    // 300 operations of ~200 kB each, and a client that stops reading: without a bound the
    // server queued every reply (711 MB).
    const before = rssBytes();
    const ws = new WebSocket(svc.url.replace('http', 'ws') + '/graphql', 'graphql-transport-ws');
    await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
    const acked = new Promise((resolve) => ws.once('message', resolve));
    ws.send(JSON.stringify({ type: 'connection_init' }));
    await acked;
    ws._socket.pause();  // the client reads nothing more
    const query = `{${Array.from({ length: 100 }, (_, i) => `l${i}:items{id name tags}`).join(" ")}}`;
    for (let i = 0; i < 300; i++) ws.send(JSON.stringify({ type: 'subscribe', id: `q${i}`, payload: { query } }));
    await new Promise((r) => setTimeout(r, 1500 * scale));
    const grown = rssBytes() - before;
    note(`RSS grew by ${(grown / 1048576).toFixed(1)} MiB with 300 replies unread`);
    assert.ok(grown < 32 << 20, `RSS grew by ${(grown / 1048576).toFixed(0)} MiB`);
    await stillServes();
    ws.terminate();
  },

  async pipelined_flood() {
    const one = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    const a = await raw(one.repeat(500) + 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
                        { waitMs: 10000 * scale });
    assert.equal(a.text.match(/HTTP\/1\.1 200 /g)?.length, 501);
  },

  async slow_sender_does_not_hold_others() {
    // One byte every 200 ms: the server waits for it, and serves others meanwhile.
    const sock = net.connect(Number(port), '127.0.0.1');
    await new Promise((r) => sock.on('connect', r));
    const request = 'GET /healthz HTTP/1.1\r\nHost: x\r\n';
    let i = 0;
    const dribble = setInterval(() => { if (i < request.length) sock.write(request[i++]); }, 200);
    try {
      const ms = await stillServes();
      assert.ok(ms < 100 * scale, `a cheap query took ${ms.toFixed(0)} ms`);
    } finally {
      clearInterval(dribble);
      sock.destroy();
    }
  },
};

// ---- run ------------------------------------------------------------------------------------------
let passed = 0;
let failed = 0;
const baseline = { rss: rssBytes(), fds: openFds() };
try {
  for (const [name, run] of Object.entries(cases)) {
    if (values.only && values.only !== name) continue;
    const t0 = performance.now();
    try {
      await run();
      await stillServes();
      assert.equal(svc.child.exitCode, null, 'the server is still running');
      passed++;
      console.log(`ok    ${name} (${(performance.now() - t0).toFixed(0)} ms, rss ${(rssBytes() / 1048576).toFixed(0)} MiB, fds ${openFds()})`);
      for (const n of notes.splice(0)) console.log(`      ${n}`);
    } catch (e) {
      failed++;
      console.log(`FAIL  ${name}: ${e.stack ?? e}`);
    }
  }
  // Everything the cases opened is closed again (the server closes idle connections, and a
  // few may still be closing).
  await new Promise((r) => setTimeout(r, 300));
  const fds = openFds();
  if (fds > baseline.fds + 8) {
    failed++;
    console.log(`FAIL  descriptors: ${baseline.fds} at the start, ${fds} at the end`);
  }
  // Freed memory goes back to the system shortly after large requests.
  await new Promise((r) => setTimeout(r, 1500));
  const rss = rssBytes();
  console.log(`rss: ${(baseline.rss / 1048576).toFixed(0)} MiB at the start, ${(rss / 1048576).toFixed(0)} MiB at the end`);
  if (!values.only && !values['no-rss-baseline'] && rss > baseline.rss + (48 << 20)) {
    failed++;
    console.log('FAIL  RSS did not return near its baseline');
  }
} finally {
  const { code, signal } = await svc.stop();
  if (signal && signal !== 'SIGTERM') { failed++; console.log(`FAIL  the server died with ${signal}`); }
  if (code !== null && code !== 0 && !signal) { failed++; console.log(`FAIL  the server exited with ${code}`); }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
