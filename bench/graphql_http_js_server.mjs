// The warehouse schema served by graphql-js 16 through graphql-http's Node handler: the
// reference bench/http-compare measures cutoff's GraphQL over HTTP against.
//
//   node bench/graphql_http_js_server.mjs [--port N]   # prints "listening on http://127.0.0.1:PORT"
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { buildSchema } from 'graphql';
import { createHandler } from 'graphql-http/lib/use/http';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, help: { type: 'boolean' } } });
if (values.help) {
  console.log('usage: node bench/graphql_http_js_server.mjs [--port N]');
  process.exit(0);
}
const schema = buildSchema(`
  type Query { warehouse(id: ID!): Warehouse }
  type Warehouse { id: ID! name: String! bins(first: Int!): [Bin!]! }
  type Bin { id: ID! sku: String! qty: Int! location: String stock: Stock }
  type Stock { onHand: Int! reserved: Int! valuation: Float }
`);
const bins = [];
for (let i = 0; i < 1000; ++i)
  bins.push({ id: 'b' + i, sku: 'SKU-' + i, qty: i, location: 'A' + (i % 40),
              stock: { onHand: i, reserved: i >> 1, valuation: i * 1.5 } });
const warehouse = { id: 'w1', name: 'Main warehouse', bins: ({ first }) => bins.slice(0, first) };
const handler = createHandler({ schema, rootValue: { warehouse: () => warehouse } });
const server = createServer((req, res) => {
  if (req.url.startsWith('/graphql')) return handler(req, res);
  res.writeHead(404).end();
});
server.keepAliveTimeout = 60000;
server.listen(Number(values.port), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port} (graphql-js ${'16'} via graphql-http)`);
});
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => server.close(() => process.exit(0)));
