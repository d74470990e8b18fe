// The example from Claude Code's documentation, nearly.
// args: {"items": ["a", "b", "c"]}
// want: ["echo: review a","echo: review b","echo: review c"]
// calls: /par.0/0 review a
// calls: /par.0/1 review b
// calls: /par.0/2 review c
// meta: {"name":"review","description":"Review things","whenToUse":"when asked to review a list","phases":[{"title":"Review"},{"title":"Verify"}]}
export const meta = { name: 'review', description: 'Review things', whenToUse: 'when asked to review a list', phases: [{ title: 'Review' }, 'Verify'] }
const S = { type: 'string' }
const xs = await parallel(args.items.map(i => () => agent(`review ${i}`, { label: `r${i}`, schema: S })))
return xs.filter(Boolean)
