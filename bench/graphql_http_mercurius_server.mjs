// The warehouse schema served by mercurius (Fastify with graphql-jit compiling each operation
// after its first use): the fastest JavaScript GraphQL server bench/http-compare measures
// cutoff's GraphQL over HTTP against, beside graphql-js behind graphql-http.
//
//   node bench/graphql_http_mercurius_server.mjs [--port N]   # prints "listening on http://127.0.0.1:PORT"
import Fastify from 'fastify';
import mercurius from 'mercurius';
import { parseArgs } from 'node:util';
import { WAREHOUSE_SDL, warehouse } from './warehouse.mjs';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, help: { type: 'boolean' } } });
if (values.help) {
  console.log('usage: node bench/graphql_http_mercurius_server.mjs [--port N]');
  process.exit(0);
}
const app = Fastify({ logger: false, keepAliveTimeout: 60000 });
app.register(mercurius, {
  schema: WAREHOUSE_SDL,
  resolvers: {
    Query: { warehouse: () => warehouse },
    Warehouse: { bins: (source, { first }) => source.bins.slice(0, first) },
  },
  jit: 1,  // compile an operation with graphql-jit once it has been seen
});
const address = await app.listen({ port: Number(values.port), host: '127.0.0.1' });
console.log(`listening on ${address} (mercurius with graphql-jit)`);
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => app.close().then(() => process.exit(0)));
