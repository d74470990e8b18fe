// run-error: 6:45: Error: Date.now() is unavailable in workflow scripts: a resumed run re-executes the script and must make the same calls; pass timestamps in args or stamp results after the run
export const meta = { name: 'stamped', description: 'Stamps its result with the clock' }

const r = await agent('work')
// new Date(x) is fine: it reads no clock.
return { r, epoch: new Date(0), at: Date.now() }
