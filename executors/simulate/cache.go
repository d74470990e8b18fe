package simulate

import "sync"

// schemaCacheSize bounds how many compiled schemas an executor keeps. A
// workflow uses a handful of schemas, called many times; the bound only
// guards against a stream of distinct ones.
const schemaCacheSize = 256

// schemaCache keeps compiled schemas by their text, so that calls sharing a
// schema compile it once. It is safe for concurrent use.
type schemaCache struct {
	mu      sync.Mutex
	entries map[string]compiled
}

// compiled is a schema's generator, or why it would not compile.
type compiled struct {
	gen *Generator
	err error
}

// generator returns the generator of schema, compiling it on first use.
func (c *schemaCache) generator(schema []byte) (*Generator, error) {
	c.mu.Lock()
	e, ok := c.entries[string(schema)]
	c.mu.Unlock()
	if ok {
		return e.gen, e.err
	}
	// Two callers may compile the same schema at once; either result will
	// do, and compiling outside the lock keeps other schemas flowing.
	gen, err := NewGenerator(schema)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= schemaCacheSize {
		// Starting afresh is cruder than evicting the least recently
		// used schema, but a full cache is already the unusual case.
		c.entries = make(map[string]compiled)
	}
	c.entries[string(schema)] = compiled{gen, err}
	return gen, err
}
