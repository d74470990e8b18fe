package worktree

import (
	"slices"
	"testing"
)

func TestGitEnv(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"repository variables of a hook are dropped",
			[]string{"PATH=/bin", "GIT_DIR=/elsewhere/.git", "GIT_NO_REPLACE_OBJECTS=0", "GIT_WORK_TREE=/elsewhere", "GIT_INDEX_FILE=/x", "GIT_AUTHOR_NAME=kept"},
			[]string{"PATH=/bin", "GIT_AUTHOR_NAME=kept", "LC_MESSAGES=C", "GIT_TERMINAL_PROMPT=0", "GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=/dev/null", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1"}},
		{"only the messages' language changes",
			[]string{"LANG=de_DE.UTF-8", "LC_MESSAGES=de_DE.UTF-8", "LC_CTYPE=de_DE.UTF-8"},
			[]string{"LANG=de_DE.UTF-8", "LC_CTYPE=de_DE.UTF-8", "LC_MESSAGES=C", "GIT_TERMINAL_PROMPT=0", "GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=/dev/null", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1"}},
		{"LC_ALL becomes LANG, so that LC_MESSAGES can apply",
			[]string{"LANG=en_US.UTF-8", "LC_ALL=fr_FR.UTF-8", "GIT_TERMINAL_PROMPT=1"},
			[]string{"LANG=fr_FR.UTF-8", "LC_MESSAGES=C", "GIT_TERMINAL_PROMPT=0", "GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=/dev/null", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := gitEnv(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("gitEnv(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseShortstat(t *testing.T) {
	tests := map[string]Stat{
		" 3 files changed, 10 insertions(+), 2 deletions(-)\n": {Files: 3, Insertions: 10, Deletions: 2},
		" 1 file changed, 1 insertion(+)\n":                    {Files: 1, Insertions: 1},
		" 1 file changed, 4 deletions(-)\n":                    {Files: 1, Deletions: 4},
		" 2 files changed, 0 insertions(+), 0 deletions(-)\n":  {Files: 2},
		"": {},
	}
	for in, want := range tests {
		if got := parseShortstat(in); got != want {
			t.Errorf("parseShortstat(%q) = %+v, want %+v", in, got, want)
		}
	}
}
