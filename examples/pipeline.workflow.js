export const meta = {
  name: 'three-stage-pipeline',
  description: 'Plan, implement and test each item; items flow independently',
  whenToUse: 'args: { items?: number } (default 20)',
  phases: ['Plan', 'Implement', 'Test'],
}

const n = (args && args.items) || 20
const items = Array.from({ length: n }, (_, i) => `module-${i}`)

const results = await pipeline(
  items,
  item => agent(`Plan the change for ${item}`, { label: `plan:${item}`, phase: 'Plan' }),
  (plan, item) => agent(`Implement ${item} following this plan: ${plan}`, { label: `impl:${item}`, phase: 'Implement' }),
  (impl, item) => agent(`Write and run tests for ${item}; the implementation said: ${impl}`, { label: `test:${item}`, phase: 'Test' }),
)

return results.map((r, i) => ({ item: items[i], ok: r !== null }))
