package web

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// ErrOwned is matched by the error of ClaimOwnership when a live process
// already owns the project.
var ErrOwned = errors.New("the project already has a live runtime")

// OwnedError names the live owner, as far as its descriptor tells.
type OwnedError struct {
	Descriptor Descriptor // zero if the owner has not written it yet
}

func (e *OwnedError) Error() string {
	if e.Descriptor.PID == 0 {
		return "another dynworkflow serve is starting for this project"
	}
	return fmt.Sprintf("dynworkflow serve (pid %d) already owns this project at %s", e.Descriptor.PID, e.Descriptor.URL)
}

func (e *OwnedError) Unwrap() error { return ErrOwned }

// Ownership makes its holder the project's only live runtime: an
// exclusive flock on runtime.json.lock. The kernel drops it when the
// process exits, even by SIGKILL, so a descriptor left behind by a dead
// owner is simply replaced. The lock file is never removed: unlinking it
// would let two processes lock two different files.
type Ownership struct {
	file *os.File
}

// ClaimOwnership takes ownership of the project whose descriptor is at
// descriptorPath, or returns an *OwnedError.
func ClaimOwnership(descriptorPath string) (*Ownership, error) {
	f, err := os.OpenFile(descriptorPath+".lock", os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("claim the project: %w", err)
	}
	busy, err := fsx.Flock(f, unix.LOCK_EX)
	if busy || err != nil {
		_ = f.Close()
		if busy {
			d, _ := ReadDescriptor(descriptorPath)
			return nil, &OwnedError{Descriptor: d}
		}
		return nil, fmt.Errorf("claim the project: %w", err)
	}
	return &Ownership{file: f}, nil
}

// Release gives ownership up.
func (o *Ownership) Release() error {
	if o == nil || o.file == nil {
		return nil
	}
	err := o.file.Close() // closing drops the flock
	o.file = nil
	return err
}
