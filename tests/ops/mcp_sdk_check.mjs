// cutoff's MCP server against the official TypeScript SDK client (@modelcontextprotocol/sdk),
// over both transports: stdio (`cutoff ops mcp`) and streamable HTTP (`cutoff ops serve`, /mcp).
// On each:
//   1. initialize, and the tool list: every description states the operation's budget;
//   2. a fast tool answers, with structured content where the tool declares an output schema;
//   3. a tool that overruns its budget is an error result with deadline_exceeded, returned at
//      the budget (the handler was stopped, not left running);
//   4. a tool stopped after its commit point is commit_ambiguous and says not to retry without
//      an idempotency key; with one, retrying returns the first order instead of a second;
//   5. a call cancelled by the client (AbortSignal -> notifications/cancelled) stops the
//      handler with `cancelled` within milliseconds (the server's log line or /metrics);
//   6. malformed JSON-RPC gets a clear error and the server carries on.
//
//   node tests/ops/mcp_sdk_check.mjs --cutoff build/bin/cutoff [--time-scale N]
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { metric, startService } from '../support/service.mjs';

const { values } = parseArgs({ options: { cutoff: { type: 'string' }, 'time-scale': { type: 'string' }, help: { type: 'boolean' } } });
if (values.help || !values.cutoff) {
  console.log('usage: node tests/ops/mcp_sdk_check.mjs --cutoff PATH [--time-scale N]');
  process.exit(values.help ? 0 : 2);
}
const scale = Number(values['time-scale'] ?? process.env.CUTOFF_TEST_TIME_SCALE ?? 1);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'cutoff-mcp-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

const errorOf = (result) => result._meta?.['dev.cutoff/error'];
const textOf = (result) => result.content.map((c) => c.text).join('\n');

// Steps 1-5 through an SDK client; `cancelSeen(ms)` resolves to the cancelled call's record once the
// server reports it, or null after `ms`.
async function exercise(label, client, cancelSeen) {
  // 1. The tool list states each budget.
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const name of ['example.echo', 'example.sleep', 'example.budget', 'example.orders.create']) {
    assert.ok(byName[name], `${label}: tool ${name} is listed`);
  }
  assert.match(byName['example.sleep'].description, /Time budget: 10 s\.$/, `${label}: sleep's budget`);
  assert.match(byName['example.orders.create'].description, /Time budget: 2 s\.$/, `${label}: orders' budget`);
  assert.equal(byName['example.orders.create']._meta['dev.cutoff/deadline-seconds'], 2);
  assert.equal(byName['example.sleep'].inputSchema.required[0], 'ms');
  assert.ok(byName['example.orders.create'].inputSchema.properties.idempotency_key, `${label}: keys as an argument`);
  console.log(`${label}: ${tools.length} tools, each with its budget in the description`);

  // 2. A fast tool.
  let r = await client.callTool({ name: 'example.echo', arguments: { hello: 'agent' } });
  assert.equal(r.isError, false);
  assert.deepEqual(JSON.parse(textOf(r)), { hello: 'agent' });
  r = await client.callTool({ name: 'example.sleep', arguments: { ms: 5 } });
  assert.deepEqual(r.structuredContent, { slept_ms: 5 }, `${label}: structured content (the tool has an output schema)`);
  console.log(`${label}: fast calls answer`);

  // 3. Overrunning the declared budget (2 s): the work of 60 s is stopped at 2 s.
  let start = Date.now();
  r = await client.callTool({ name: 'example.orders.create', arguments: { sku: 'A-1', work_ms: 60000 } });
  let took = Date.now() - start;
  assert.equal(r.isError, true);
  assert.equal(errorOf(r).code, 'deadline_exceeded', textOf(r));
  assert.equal(errorOf(r).retryable, false);
  assert.ok(took >= 1900 && took < 2000 + 1500 * scale, `${label}: the overrun ended at the 2 s budget (${took} ms)`);
  // The caller's own budget (in _meta) shortens a tool's.
  start = Date.now();
  r = await client.callTool({ name: 'example.sleep', arguments: { ms: 60000 }, _meta: { 'dev.cutoff/budget-ms': 300 } });
  took = Date.now() - start;
  assert.equal(errorOf(r).code, 'deadline_exceeded');
  assert.ok(took >= 290 && took < 300 + 1000 * scale, `${label}: a 300 ms caller budget (${took} ms)`);
  console.log(`${label}: a call past its budget is deadline_exceeded at the budget (${took} ms for 300 ms)`);

  // 4. Stopped after the commit point.
  r = await client.callTool({ name: 'example.orders.create', arguments: { sku: 'B-2', work_ms: 10, after_commit_ms: 60000 } });
  assert.equal(errorOf(r).code, 'commit_ambiguous', textOf(r));
  assert.match(textOf(r), /Do not retry it without an idempotency key/);
  const key = `${label}-order-${process.pid}`;
  r = await client.callTool({ name: 'example.orders.create',
    arguments: { sku: 'C-3', work_ms: 10, after_commit_ms: 60000, idempotency_key: key } });
  assert.equal(errorOf(r).code, 'commit_ambiguous', textOf(r));
  assert.match(textOf(r), /Retrying with the same idempotency key is safe/);
  const again = await client.callTool({ name: 'example.orders.create',
    arguments: { sku: 'C-3', work_ms: 10, after_commit_ms: 60000, idempotency_key: key } });
  assert.equal(again.isError, false, textOf(again));
  assert.equal(again.structuredContent.replayed, true, `${label}: the retry returns the first order`);
  const fresh = await client.callTool({ name: 'example.orders.create',
    arguments: { sku: 'C-3', work_ms: 1, after_commit_ms: 1, idempotency_key: `${key}-2` } });
  assert.notEqual(fresh.structuredContent.order_id, again.structuredContent.order_id);
  console.log(`${label}: commit_ambiguous says how to retry; the keyed retry replayed ${again.structuredContent.order_id}`);

  // 5. The client cancels a call.
  const abort = new AbortController();
  const call = client.callTool({ name: 'example.sleep', arguments: { ms: 60000 } }, undefined, { signal: abort.signal });
  await sleep(200);
  const cancelledAt = Date.now();
  abort.abort('the user changed their mind');
  await assert.rejects(call);
  const seen = await cancelSeen(3000 * scale);
  assert.ok(seen, `${label}: the server reported the cancelled call`);
  const lag = seen.at - cancelledAt;
  assert.ok(lag < 300 * scale, `${label}: the handler stopped ${lag} ms after the cancel`);
  console.log(`${label}: a client cancel stopped the handler with cancelled ${lag} ms later`);
}

// Polls `probe()` until it returns something, for at most `ms`.
async function waitFor(probe, ms) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) return null;
    await sleep(5);
  }
}

// ---- stdio: `cutoff ops mcp` ----
{
  const transport = new StdioClientTransport({
    command: values.cutoff, args: ['ops', 'mcp', '--db', `sqlite:${join(dir, 'stdio.db')}`], stderr: 'pipe',
  });
  const records = [];
  let stderr = '';
  transport.stderr.on('data', (d) => {
    stderr += d;
    for (;;) {
      const nl = stderr.indexOf('\n');
      if (nl < 0) break;
      const line = stderr.slice(0, nl);
      stderr = stderr.slice(nl + 1);
      if (line.startsWith('{')) records.push({ ...JSON.parse(line), at: Date.now() });
    }
  });
  const client = new Client({ name: 'cutoff-mcp-check', version: '1.0.0' });
  await client.connect(transport);
  assert.equal(client.getServerVersion().name, 'cutoff-example-operations');
  assert.match(client.getInstructions(), /time budget/);
  await exercise('stdio', client, (ms) => waitFor(() => records.find((r) => r.mcp_tool === 'example.sleep' &&
    r.outcome === 'cancelled' && r.cancelled_by_client), ms));
  await client.close();
}

// Malformed input on stdio: a raw process, line by line.
{
  const child = spawn(values.cutoff, ['ops', 'mcp', '--quiet', '--db', `sqlite:${join(dir, 'raw.db')}`], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const waiters = [];
  child.stdout.on('data', (d) => {
    out += d;
    while (out.includes('\n') && waiters.length) {
      const nl = out.indexOf('\n');
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      waiters.shift()(JSON.parse(line));
    }
  });
  const ask = (text) => new Promise((resolve) => { waiters.push(resolve); child.stdin.write(text + '\n'); });
  let r = await ask('{"jsonrpc":"2.0","id":1,"method":"initialize"');
  assert.equal(r.error.code, -32700);
  assert.equal(r.id, null);
  r = await ask('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
  assert.equal(r.error.code, -32600);
  r = await ask('{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
  assert.equal(r.error.code, -32600, 'tools before initialize');
  r = await ask('{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}');
  assert.equal(r.result.protocolVersion, '2025-06-18');
  r = await ask('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no.such.tool"}}');
  assert.equal(r.error.code, -32602);
  r = await ask(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping', params: { pad: 'x'.repeat(2 * 1024 * 1024) } }));
  assert.equal(r.error.code, -32600, 'a message over 1 MiB');
  r = await ask('{"jsonrpc":"2.0","id":6,"method":"ping"}');
  assert.deepEqual(r.result, {}, 'still serving');
  child.stdin.end();
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0);
  console.log('stdio: malformed JSON-RPC gets clear errors; the server carries on and exits 0 at the end of input');
}

// ---- streamable HTTP: `cutoff ops serve`, /mcp ----
{
  const svc = await startService(values.cutoff, ['ops', 'serve', '--db', `sqlite:${join(dir, 'http.db')}`]);
  try {
    const transport = new StreamableHTTPClientTransport(new URL(svc.url + '/mcp'));
    const client = new Client({ name: 'cutoff-mcp-check', version: '1.0.0' });
    await client.connect(transport);
    assert.ok(transport.sessionId, 'a session id');
    const series = 'cutoff_mcp_tool_calls_total{tool="example.sleep",outcome="cancelled"}';
    await exercise('http', client, (ms) => waitFor(async () => {
      const n = metric(await (await fetch(svc.url + '/metrics')).text(), series);
      return n >= 1 ? { at: Date.now() } : null;
    }, ms));
    // Malformed messages over HTTP.
    const post = (body, headers = {}) => fetch(svc.url + '/mcp', {
      method: 'POST', body, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId, ...headers } });
    let res = await post('{"jsonrpc":');
    assert.equal(res.status, 200);
    assert.equal((await res.json()).error.code, -32700);
    res = await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', { 'mcp-session-id': 'not-a-session' });
    assert.equal(res.status, 404);
    res = await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', { origin: 'http://evil.example' });
    assert.equal(res.status, 403);
    const { tools } = await client.listTools();
    assert.ok(tools.length >= 4, 'still serving');
    await client.close();
    console.log('http: malformed JSON-RPC, unknown sessions and foreign origins are refused; the server carries on');
    const stopped = await svc.stop();
    assert.equal(stopped.code, 0);
  } finally {
    await svc.stop();
  }
}
console.log('mcp_sdk_check: ok');
