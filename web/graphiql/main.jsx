// Entry point of the GraphiQL page (bundled by scripts/build-graphiql).
//
// Queries go to the endpoint named by the root element's data-endpoint attribute (default
// "/graphql"), or by an ?endpoint= query parameter when it is on the page's own origin. A
// data-example attribute holds the operation a first visit opens with. The
// fetcher posts JSON and shows whatever JSON body comes back, whatever the status: a GraphQL
// over HTTP server answers a partial result (data and errors) with 200 and a request error
// with 4xx, and both belong in the result pane.
import { GraphiQL } from 'graphiql';
import 'graphiql/graphiql.css';
import { createRoot } from 'react-dom/client';

const DEFAULT_QUERY = `# Type a query and press the run button (or Ctrl-Enter).
# A field that runs out of time comes back null, with a
# DEADLINE_EXCEEDED error, next to the data that was on time.
{
  __typename
}
`;

function endpointFor(root, location) {
  const fallback = new URL(root.dataset.endpoint || '/graphql', location.href);
  const requested = new URLSearchParams(location.search).get('endpoint');
  if (!requested) return fallback.href;
  const url = new URL(requested, location.href);
  // A link must not be able to point the page (and any headers typed into it) elsewhere.
  if (url.origin !== location.origin) {
    console.warn(`GraphiQL: ignoring ?endpoint=${requested}: not on this origin`);
    return fallback.href;
  }
  return url.href;
}

function jsonFetcher(endpoint) {
  return async (params, options) => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        accept: 'application/graphql-response+json, application/json;q=0.9',
        'content-type': 'application/json',
        ...(options?.headers ?? {}),
      },
      body: JSON.stringify(params),
      credentials: 'same-origin',
    });
    const type = response.headers.get('content-type') ?? '';
    const text = await response.text();
    if (/[/+]json\b/.test(type)) return JSON.parse(text);
    throw new Error(`${endpoint} answered ${response.status} ${response.statusText} ` +
                    `(${type || 'no content type'}): ${text.slice(0, 500)}`);
  };
}

// ?query=, ?variables= and ?operationName= open that operation, and the URL follows the
// editors so that what is on screen can be shared as a link. Without them GraphiQL opens
// the last operation typed in this browser, or else the server's example.
function urlState(location) {
  const params = new URLSearchParams(location.search);
  const state = {};
  for (const key of ['query', 'variables', 'operationName']) {
    const value = params.get(key);
    if (value !== null) state[key] = value;
  }
  return state;
}

function follow(key) {
  return (value) => {
    const params = new URLSearchParams(window.location.search);
    if (value) params.set(key, value);
    else params.delete(key);
    const search = params.toString();
    window.history.replaceState(null, '', window.location.pathname + (search ? `?${search}` : '') + window.location.hash);
  };
}

const root = document.getElementById('graphiql');
const endpoint = endpointFor(root, window.location);
const initial = urlState(window.location);
const example = root.dataset.example ? `${root.dataset.example}\n` : DEFAULT_QUERY;
root.textContent = '';
createRoot(root).render(
  <GraphiQL
    fetcher={jsonFetcher(endpoint)}
    defaultQuery={example}
    query={initial.query}
    variables={initial.variables}
    operationName={initial.operationName}
    onEditQuery={follow('query')}
    onEditVariables={follow('variables')}
    onEditOperationName={follow('operationName')}
    schemaDescription
  />,
);
