// load-error: 5:11: SyntaxError: Unexpected token ILLEGAL (check for an unterminated string or a character JavaScript does not allow)
export const meta = { name: 'broken', description: 'Has an unterminated string' }

const a = await agent('one')
const b = 'two
return [a, b]
