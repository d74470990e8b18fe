// load-error: 5:14: meta must be a pure literal: found a function call (meta is read without running the script; write the value out)
export const meta = {
  name: 'dated',
  description: 'A report',
  whenToUse: today(),
}
