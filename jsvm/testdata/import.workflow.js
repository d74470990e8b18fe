// load-error: 4:1: import is not supported in workflow scripts (inline the helper code or call workflow())
export const meta = { name: 'imports', description: 'Tries to import a helper' }

import { helper } from './helper.js'
return helper()
