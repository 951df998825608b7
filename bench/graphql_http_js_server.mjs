// The warehouse schema served by graphql-js 16 through graphql-http's Node handler: the
// reference bench/http-compare measures cutoff's GraphQL over HTTP against.
//
//   node bench/graphql_http_js_server.mjs [--port N]   # prints "listening on http://127.0.0.1:PORT"
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { buildSchema } from 'graphql';
import { createHandler } from 'graphql-http/lib/use/http';
import { WAREHOUSE_SDL, warehouse } from './warehouse.mjs';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, help: { type: 'boolean' } } });
if (values.help) {
  console.log('usage: node bench/graphql_http_js_server.mjs [--port N]');
  process.exit(0);
}
const schema = buildSchema(WAREHOUSE_SDL);
// The default field resolver calls `bins` with the field's arguments.
const root = { ...warehouse, bins: ({ first }) => warehouse.bins.slice(0, first) };
const handler = createHandler({ schema, rootValue: { warehouse: () => root } });
const server = createServer((req, res) => {
  if (req.url.startsWith('/graphql')) return handler(req, res);
  res.writeHead(404).end();
});
server.keepAliveTimeout = 60000;
server.listen(Number(values.port), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port} (graphql-js ${'16'} via graphql-http)`);
});
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => server.close(() => process.exit(0)));
