// load-error: 5:14: require() is not supported in workflow scripts (inline the helper code or call workflow())
export const meta = { name: 'requires', description: 'Tries to require a module' }

function read(p) {
  const fs = require('fs')
  return fs.readFileSync(p, 'utf8')
}
return read('x')
