// Package worktree gives an agent call a git worktree of its own and makes
// sure that whatever the agent leaves there ends up on a branch.
//
// It drives the git binary rather than a Go reimplementation of git, so the
// user's own configuration (identity, git-lfs) and git's locking behave as
// they do for git itself. What the repository's configuration or an
// agent could make git run does not: every command names its git
// directory and work tree explicitly, runs no hook, fsmonitor, pager,
// editor or transport, and switches off the filter, diff and merge drivers,
// credential helpers and ssh command that the repository's own
// configuration sets (git.go); a worktree whose .git was rewritten to point
// elsewhere is refused (ErrForeignGitDir).
//
// The life of one isolated call:
//
//	repo, _ := worktree.Open(ctx, projectDir)   // once per project
//	base, _ := repo.Head(ctx)                   // the commit the user is on
//	t, _ := repo.Add(ctx, worktree.AddSpec{...})  // a new branch at base, checked out in a new directory
//	... the agent works in t.WorkDir() ...
//	out, _ := t.Settle(ctx, message)            // commit what the agent left uncommitted
//	if !out.Changed { t.Remove(ctx) }           // nothing to keep: worktree and branch go
//
// Add claims a unique directory and a unique branch name (name, name-2,
// name-3, ...), so parallel calls never collide. The main checkout is never
// switched, reset or written: a worktree only adds a branch and an entry
// under the repository's worktrees administration directory.
//
// Git serializes what must be serialized with its own lock files. Lock
// contention ("Unable to create '….lock': File exists") is retried with
// backoff for a few seconds before it is reported.
package worktree
