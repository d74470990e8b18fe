// Package store decides where runs live on disk and owns the files that are
// not the journal: the run snapshot and its backup, and the run lease.
//
// A state root (DefaultRoot, or --state-dir) holds one directory per project,
// keyed by the working directory the runtime was started in:
//
//	<root>/
//	  projects/<project-id>/
//	    runtime.json          descriptor of the live runtime, if any
//	    runs/<run-id>.json    snapshot: a fast-read projection of the run
//	    runs/<run-id>.json.bak  the previous good snapshot
//	    runs/<run-id>.lock    the run lease
//	    runs/<run-id>.jsonl   the journal (package journal), the truth
//	    saved/                saved workflows of the project
//	    worktrees/<run-id>/   git worktrees of the run's isolated agent calls
//	  saved/                  saved workflows of every project
//
// Directories are 0700 and files 0600: runs hold prompts and agent output.
//
// The snapshot can always be rebuilt from the journal; the store's job is to
// write it so that a crash never leaves neither it nor its backup readable,
// and to read run summaries for listings without reading whole snapshots.
//
// The lease makes one process the owner of a run. It is an flock on the lock
// file, so the kernel releases it when the owner dies, however it dies.
package store
