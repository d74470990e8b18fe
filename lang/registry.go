package lang

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// Registry picks a Host by file extension, and checks what a host can
// find of a script's agent() calls before it runs (CheckStaticCalls).
type Registry struct {
	hosts []Host

	mu     sync.Mutex
	schema SchemaCheck
}

// CheckSchemasWith makes Load check the schemas a script writes out in
// its agent() calls with check, unless a check was given already: the
// engine gives its own, so that a schema is judged at load time as it
// would be at the call. Without one, only option names and types are
// checked at load time.
func (r *Registry) CheckSchemasWith(check SchemaCheck) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.schema == nil {
		r.schema = check
	}
}

func (r *Registry) schemaCheck() SchemaCheck {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.schema
}

// NewRegistry returns a registry holding hosts.
func NewRegistry(hosts ...Host) *Registry {
	r := &Registry{}
	for _, h := range hosts {
		r.Register(h)
	}
	return r
}

// Register adds a host. A later host wins a tie on an identical extension.
func (r *Registry) Register(h Host) { r.hosts = append(r.hosts, h) }

// HostFor returns the host whose extension matches path, preferring the
// longest match, so ".workflow.star" beats a host that only claims ".star".
func (r *Registry) HostFor(path string) (Host, bool) {
	var best Host
	bestLen := 0
	for _, h := range r.hosts {
		for _, ext := range h.Extensions() {
			if strings.HasSuffix(path, ext) && len(ext) >= bestLen {
				best, bestLen = h, len(ext)
			}
		}
	}
	return best, best != nil
}

// Extensions lists every extension some host accepts, longest first.
func (r *Registry) Extensions() []string {
	var exts []string
	for _, h := range r.hosts {
		exts = append(exts, h.Extensions()...)
	}
	sort.SliceStable(exts, func(i, j int) bool { return len(exts[i]) > len(exts[j]) })
	return exts
}

// Load parses src with the host its path calls for, and checks the
// options its agent() calls write out (CheckStaticCalls).
func (r *Registry) Load(src Source) (Script, error) {
	h, ok := r.HostFor(src.Path)
	if !ok {
		return nil, &Error{File: src.Path, Static: true,
			Message: "no script host for this file",
			Hint:    "name workflow files " + strings.Join(r.Extensions(), " or ")}
	}
	s, err := h.Load(src)
	if err != nil {
		return nil, err
	}
	if sc, ok := s.(StaticCalls); ok {
		if err := CheckStaticCalls(sc.AgentCalls(), r.schemaCheck()); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// LoadFile reads and loads the script at path.
func (r *Registry) LoadFile(path string) (Script, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read workflow: %w", err)
	}
	return r.Load(Source{Path: path, Text: text})
}
