export const meta = {
  name: 'hunt-until-dry',
  description: 'Hunt for bugs in rounds until two rounds find nothing new, within a token budget',
  whenToUse: 'args: { maxRounds?: number }; run with --token-budget to cap the spend',
  phases: [{ title: 'Find' }],
}

const FINDINGS = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array', maxItems: 2,
      items: { type: 'object', required: ['file', 'claim'], properties: { file: { type: 'string' }, claim: { type: 'string' } } },
    },
  },
}

const maxRounds = (args && args.maxRounds) || 5
const seen = new Set()
let quiet = 0
let round = 0
while (quiet < 2 && round < maxRounds) {
  // Budget guard: stop before a round we could not pay for.
  if (budget.total !== null && budget.remaining() < 2000) {
    log(`stopping: only ${budget.remaining()} tokens left`)
    break
  }
  round++
  phase('Find')
  const batches = await parallel(['by-file', 'by-symbol', 'by-test'].map(angle => () =>
    agent(`Round ${round}: hunt for bugs, searching ${angle}. Skip anything in: ${JSON.stringify([...seen])}`,
      { label: `hunt:${angle}:${round}`, schema: FINDINGS })))
  const fresh = batches.filter(Boolean).flatMap(b => b.items).filter(f => !seen.has(`${f.file}|${f.claim}`))
  if (fresh.length === 0) {
    quiet++
    continue
  }
  quiet = 0
  fresh.forEach(f => seen.add(`${f.file}|${f.claim}`))
}
log(`stopped after ${round} rounds with ${seen.size} distinct findings; ${budget.spent()} tokens spent`)
return { rounds: round, findings: [...seen] }
