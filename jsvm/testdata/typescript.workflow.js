// load-error: 4:27: TypeScript syntax is not supported; workflow scripts are plain JavaScript: found a type annotation (remove the type annotations and declarations)
export const meta = { name: 'typed', description: 'Written in TypeScript by mistake' }

async function review(file: string): Promise<string> {
  return agent(`review ${file}`)
}
return review('a.go')
