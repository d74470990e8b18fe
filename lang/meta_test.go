package lang

import "testing"

func TestDecodeMeta(t *testing.T) {
	at := func(col int, v any) Literal { return Literal{Pos{"f", 1, col}, v} }
	n := Notation{Object: "a dict", Phases: "p", Phase: "q", Field: "add %s"}
	desc, err := Concat(Pos{"f", 1, 4}, at(4, "a"), at(8, "b"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeMeta(at(1, []Field{{"name", at(2, "n")}, {"description", desc}, {"phases", at(12, []Literal{at(13, "x")})}}), n)
	if err != nil || m.Description != "ab" || len(m.Phases) != 1 || m.Phases[0].Title != "x" {
		t.Fatalf("DecodeMeta = %+v, %v", m, err)
	}
	for _, tc := range []struct {
		fields []Field
		want   string
	}{
		{nil, "f:1:1: meta.name must be a non-empty string (add name)"},
		{[]Field{{"name", at(2, "n")}, {"description", at(3, "d")}, {"phases", at(5, []Literal{at(6, 3.0)})}}, "f:1:6: meta.phases[0] must be a dict or a string (q)"},
	} {
		if _, err := DecodeMeta(at(1, tc.fields), n); err == nil || err.Error() != tc.want {
			t.Errorf("error = %v, want %s", err, tc.want)
		}
	}
	if _, err := Concat(Pos{"f", 2, 3}, at(1, "a"), at(5, true)); err == nil || err.Error() != "f:2:3: meta must be a pure literal: found + between values that are not both strings ("+LiteralHint+")" {
		t.Errorf("Concat error = %v", err)
	}
}

// ModelFor routes as the Node runtime's resolveModelForPhase: an exact
// phase title with a model, else meta.model; no phase means the first.
func TestMetaModelFor(t *testing.T) {
	m := Meta{Model: "sonnet", Phases: []Phase{{Title: "Design", Model: "opus"}, {Title: "Build"}, {Title: "design", Model: "haiku"}}}
	for phase, want := range map[string]string{"": "opus", "Design": "opus", "Build": "sonnet", "design": "haiku", "Other": "sonnet", "DESIGN": "sonnet"} {
		if got := m.ModelFor(phase); got != want {
			t.Errorf("ModelFor(%q) = %q, want %q", phase, got, want)
		}
	}
	if got := (Meta{Phases: []Phase{{Title: "A"}}}).ModelFor("A"); got != "" {
		t.Errorf("no models: %q", got)
	}
}
