// Real scripts bend the pure-literal rule in these ways; all are accepted.
// meta: {"name":"prd-to-rfc","description":"Turn a PRD into an RFC, then review it.","phases":[{"title":"PRD"},{"title":"RFC","detail":"draft","model":"opus"},{"title":"Review"}]}
// want: "ok"
export const meta = {
  "name": "prd-to-rfc",
  'description': 'Turn a PRD into an RFC, ' +
    "then review it.",
  phases: [
    "PRD",
    { "title": `RFC`, detail: 'draft', model: 'opus', },
    'Review',
  ],
  version: 2,
  tags: ['docs', 'planning',],
}
return meta.phases.length === 3 ? 'ok' : 'bad'
