// Top-level await and return, loops, try/catch and helpers, as real scripts use them.
// args: {"rounds": 3}
// want: {"kept":["echo: round 1","echo: round 2","echo: round 3"],"caught":"TypeError: agent(): the prompt must be a string, not undefined","label":"r3"}
// logs: info / stopped after 3 rounds
export const meta = { name: 'loop', description: 'Loops until done' }

const kept = []
let round = 0, label
while (round++ < (args?.rounds ?? 1)) {
  label = `r${round}`
  kept.push(await agent(`round ${round}`, { label }))
}
let caught
try {
  await agent()
} catch (e) {
  caught = String(e)
}
log(`stopped after ${kept.length} rounds`)
if (kept.length) return { kept, caught, label }
return null
