// load-error: 5:1: export is only allowed on meta (remove the export keyword; only meta is exported)
export const meta = { name: 'exports', description: 'Exports a helper too' }

const helper = () => 1
export { helper }
