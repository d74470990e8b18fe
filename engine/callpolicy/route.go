package callpolicy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dynworkflow/dynworkflow/engine/cost"
)

// Route sends the calls it matches to another model (or effort, or
// executor) without editing the script: the user's word at launch, from
// the run's options or the project's or user's configuration. It wins
// over what the call itself asks for, since that is the point of it; the
// call's fingerprint follows the model it resolves to, so a resume under
// another route runs the call again.
type Route struct {
	// Match names calls by label: the label itself, its pattern ("scan *"
	// names scan-1 … scan-200, see cost.LabelPattern) or a glob
	// ("scan-*"); a Match starting with "/" is a glob of the call's path,
	// for calls without a label. Empty matches every call of Phase.
	Match string `json:"match,omitempty"`
	// Phase limits the route to the calls of one phase.
	Phase    string `json:"phase,omitempty"`
	Executor string `json:"executor,omitempty"`
	Model    string `json:"model,omitempty"`
	Effort   string `json:"effort,omitempty"`
	// Source says where the route was given: "run", "project file" or
	// "user file".
	Source string `json:"source,omitempty"`
}

// Matches reports whether the route applies to the call at path, labeled
// label, in phase.
func (r Route) Matches(path, label, phase string) bool {
	if r.Phase != "" && r.Phase != phase {
		return false
	}
	switch {
	case r.Match == "":
		return r.Phase != ""
	case strings.HasPrefix(r.Match, "/"):
		return cost.Glob(r.Match, path)
	}
	return cost.LabelMatches(r.Match, label)
}

// Selector is how the route names its calls, as ParseRoute reads it.
func (r Route) Selector() string {
	switch {
	case r.Phase != "" && r.Match != "":
		return "phase:" + r.Phase + " | " + r.Match
	case r.Phase != "":
		return "phase:" + r.Phase
	}
	return r.Match
}

// String is the route as --route takes it.
func (r Route) String() string {
	var to []string
	if r.Model != "" {
		to = append(to, r.Model)
	}
	if r.Effort != "" {
		to = append(to, "effort="+r.Effort)
	}
	if r.Executor != "" {
		to = append(to, "executor="+r.Executor)
	}
	return r.Selector() + "=" + strings.Join(to, ",")
}

// efforts are the efforts a route may set, as agent({effort}) takes them.
var efforts = []string{"low", "medium", "high", "xhigh", "max"}

// Check reports what is wrong with a route.
func (r Route) Check() error {
	switch {
	case r.Match == "" && r.Phase == "":
		return fmt.Errorf("route %q names no calls: give a label pattern (\"scan *\"), a path glob (\"/par.0/*\") or phase:TITLE", r.String())
	case r.Model == "" && r.Effort == "" && r.Executor == "":
		return fmt.Errorf("route %q changes nothing: give a model, effort= or executor=", r.Selector())
	case r.Effort != "" && !slices.Contains(efforts, r.Effort):
		return fmt.Errorf("route %q: effort must be one of %s, not %q", r.Selector(), strings.Join(efforts, ", "), r.Effort)
	}
	return nil
}

// ParseRoute reads a route as --route gives it: SELECTOR=TARGET, where
// SELECTOR is a label pattern or glob ("scan *"), a path glob ("/par.0/*"),
// or phase:TITLE (optionally followed by a space and a label pattern), and
// TARGET is a model, then optional ,effort=E and ,executor=NAME (or only
// those): "scan *=haiku", "phase:Verify=sonnet,effort=low".
func ParseRoute(spec string) (Route, error) {
	sel, target, ok := strings.Cut(spec, "=")
	sel = strings.TrimSpace(sel)
	if !ok || sel == "" || strings.TrimSpace(target) == "" {
		return Route{}, fmt.Errorf("route %q: write SELECTOR=MODEL, such as 'scan *=haiku' or 'phase:Verify=sonnet,effort=low'", spec)
	}
	var r Route
	if rest, ok := strings.CutPrefix(sel, "phase:"); ok {
		// The title runs to the end, or to a label pattern after " | ".
		title, match, _ := strings.Cut(rest, " | ")
		r.Phase, r.Match = strings.TrimSpace(title), strings.TrimSpace(match)
	} else {
		r.Match = sel
	}
	for i, part := range strings.Split(target, ",") {
		part = strings.TrimSpace(part)
		key, value, kv := strings.Cut(part, "=")
		switch {
		case kv && key == "model":
			r.Model = value
		case kv && key == "effort":
			r.Effort = value
		case kv && key == "executor":
			r.Executor = value
		case kv:
			return Route{}, fmt.Errorf("route %q: %q is not model=, effort= or executor=", spec, key+"=")
		case i == 0 && part != "":
			r.Model = part
		default:
			return Route{}, fmt.Errorf("route %q: after the model come only effort=E and executor=NAME", spec)
		}
	}
	return r, r.Check()
}

// RouteFor is the first of routes that matches the call, if any.
func RouteFor(routes []Route, path, label, phase string) (Route, bool) {
	for _, r := range routes {
		if r.Matches(path, label, phase) {
			return r, true
		}
	}
	return Route{}, false
}

// ParseRouteJSON reads a route as configuration files and the API write
// it: a string as --route takes it, or an object {match, phase, model,
// effort, executor}.
func ParseRouteJSON(raw json.RawMessage) (Route, error) {
	var spec string
	if json.Unmarshal(raw, &spec) == nil {
		return ParseRoute(spec)
	}
	var r Route
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("a route is \"SELECTOR=MODEL\" or {\"match\", \"phase\", \"model\", \"effort\", \"executor\"}: %w", err)
	}
	r.Source = ""
	return r, r.Check()
}

// WithRunRoutes is routes with the run's own (Source "run") replaced by
// run, which come first: configuration routes given when the run began
// stay behind them.
func WithRunRoutes(routes, run []Route) []Route {
	out := make([]Route, 0, len(routes)+len(run))
	for _, r := range run {
		r.Source = "run"
		out = append(out, r)
	}
	for _, r := range routes {
		if r.Source != "run" {
			out = append(out, r)
		}
	}
	return out
}
