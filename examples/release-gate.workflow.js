export const meta = {
  name: 'release-gate',
  description: 'Draft release notes, ask a human to approve, then publish',
  phases: ['Draft', 'Approve', 'Publish'],
}

phase('Draft')
const notes = await agent('Draft release notes for the changes since the last tag', { label: 'draft' })

phase('Approve')
// Headless runs take the declared default; under `dynworkflow serve` a human answers.
const channel = await checkpoint('Which channel should this release go to?', {
  kind: 'select', choices: ['beta', 'stable'], default: 'beta',
})
const approved = await checkpoint(`Publish these notes to ${channel}?\n\n${notes}`, { kind: 'confirm', default: true })
if (!approved) {
  return { published: false, channel }
}

phase('Publish')
const receipt = await agent(`Publish the release to the ${channel} channel with these notes: ${notes}`, { label: 'publish' })
return { published: true, channel, receipt }
