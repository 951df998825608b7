// A stand-in GraphQL server for checking the GraphiQL page on its own: serves a page file at
// /graphiql and answers POST /graphql with graphql-js over a two-field schema in which `slow`
// always fails with DEADLINE_EXCEEDED, so that `{ fast slow }` returns a partial result:
//   {"data":{"fast":"ok","slow":null},"errors":[{"message":"deadline exceeded",...,
//    "extensions":{"code":"DEADLINE_EXCEEDED"}}]}
// Introspection works too, so GraphiQL loads its schema as it would from a real server.
//
//   node tests/graphql/graphiql_stub_server.mjs --page build/cutoff/graphql/graphiql/graphiql.html
//       serves on a free loopback port and prints the page's URL
//   node tests/graphql/graphiql_stub_server.mjs --page FILE --check [-- graphiql_check options]
//       runs graphiql_check.mjs (query `{ fast slow }`, DEADLINE_EXCEEDED) against it and exits
//       with its status; options after -- go to the check (e.g. --screenshot FILE)
import { buildSchema, execute, GraphQLError, parse, validate } from 'graphql';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const schema = buildSchema(`
  type Query {
    "Answers at once."
    fast: String
    "Always runs out of time."
    slow: String
  }
`);
const rootValue = {
  fast: () => 'ok',
  slow: () => { throw new GraphQLError('deadline exceeded', { extensions: { code: 'DEADLINE_EXCEEDED' } }); },
};

function answer(body) {
  let request;
  try {
    request = JSON.parse(body);
  } catch {
    return [400, { errors: [{ message: 'the body is not JSON' }] }];
  }
  let document;
  try {
    document = parse(String(request.query ?? ''));
  } catch (e) {
    return [400, { errors: [e] }];
  }
  const errors = validate(schema, document);
  if (errors.length) return [400, { errors }];
  return [200, execute({ schema, document, rootValue, variableValues: request.variables,
                         operationName: request.operationName })];
}

export function startStubServer({ page, host = '127.0.0.1', port = 0 }) {
  const html = readFileSync(page);
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (req.method === 'GET' && path === '/graphiql') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(html);
      return;
    }
    if (req.method === 'POST' && path === '/graphql') {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        const [status, result] = answer(Buffer.concat(chunks).toString());
        res.writeHead(status, { 'content-type': 'application/graphql-response+json; charset=utf-8' });
        res.end(JSON.stringify(await result));
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({ url: `http://${host}:${address.port}/graphiql`,
                close: () => new Promise((done) => server.close(done)) });
    });
  });
}

async function main() {
  const argv = process.argv.slice(2);
  const split = argv.indexOf('--');
  const forwarded = split < 0 ? [] : argv.slice(split + 1);
  const { values } = parseArgs({
    args: split < 0 ? argv : argv.slice(0, split),
    options: { page: { type: 'string' }, port: { type: 'string', default: '0' }, check: { type: 'boolean' },
               help: { type: 'boolean', short: 'h' } },
  });
  if (values.help || !values.page) {
    console.log(readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(0, 12)
      .map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
    process.exit(values.help ? 0 : 2);
  }
  const stub = await startStubServer({ page: values.page, port: Number(values.port) });
  if (!values.check) {
    console.log(stub.url);
    return;  // serves until killed
  }
  const { runCheck, parseCheckArgs } = await import('./graphiql_check.mjs');
  const options = parseCheckArgs(['--url', stub.url, '--query', '{ fast slow }', '--expect-code',
                                  'DEADLINE_EXCEEDED', ...forwarded]);
  let status = 1;
  try {
    status = (await runCheck(options)) ? 0 : 1;
  } finally {
    await stub.close();
  }
  process.exit(status);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => { console.error(`graphiql_stub_server: ${e.stack ?? e}`); process.exit(1); });
}
