export const meta = {
  name: 'lens-review',
  description: 'Review a change through several lenses, then verify every finding',
  whenToUse: 'args: { change: "what to review", lenses?: ["correctness", ...] }',
  phases: [{ title: 'Review' }, { title: 'Verify' }],
}

const FINDINGS = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      minItems: 1,
      maxItems: 3,
      items: {
        type: 'object',
        required: ['file', 'claim'],
        properties: { file: { type: 'string' }, claim: { type: 'string' } },
      },
    },
  },
}
const VERDICT = {
  type: 'object',
  required: ['holds'],
  properties: { holds: { type: 'boolean' }, why: { type: 'string' } },
}

const change = (args && args.change) || 'the current diff'
const lenses = (args && args.lenses) || ['correctness', 'security', 'performance']

// Each lens reviews, and its findings are verified as soon as that review
// is done: pipeline has no barrier between stages.
const perLens = await pipeline(
  lenses,
  lens => agent(`Read ${change} through the ${lens} lens; list concrete problems.`,
    { label: `review:${lens}`, phase: 'Review', schema: FINDINGS }),
  (found, lens) => parallel(found.items.map(f => () =>
    agent(`Independently check whether this ${lens} finding is real: ${f.file}: ${f.claim}`,
      { label: `check:${f.file}`, phase: 'Verify', schema: VERDICT })
      .then(v => (v && v.holds ? { lens, ...f } : null)))),
)

const confirmed = perLens.filter(Boolean).flat().filter(Boolean)
log(`${confirmed.length} findings confirmed across ${lenses.length} lenses`)
return { change, confirmed }
