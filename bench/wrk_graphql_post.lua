-- wrk script: POST the warehouse operation (8,003 fields) as GraphQL over HTTP.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/graphql-response+json"
wrk.body = '{"query":"{ warehouse(id: \\"w1\\") { id name bins(first: 1000) { id sku qty location stock { onHand reserved valuation } } } }"}'
