// Package quota is the local machine's quota governor. What one run learns
// of a provider account's quota (a 429, a usage limit) every run on the
// machine learns at once: the state root, which every dynworkflow process
// of the user shares (serve, three `run`s in three terminals), holds one
// small file per account that has met its limit, saying until when. A
// call checks it before it starts; no call of that account starts
// anywhere until the reset, so that a thousand agents do not retry into
// the same wall.
//
// Writers take an flock on the account's lock file for the few
// microseconds of a read-modify-write; readers take none (a file is
// replaced whole, by rename).
//
// What a rate limit does to a call, and to its run, is the call policy's
// (engine/callpolicy); this package only keeps the state. On Temporal,
// whose workers may sit on many machines, it does not apply.
package quota

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// Waits when the provider does not say when its quota resets: the first
// limit waits DefaultWait, and each limit met again right after a wait
// ran out (a strike) waits twice the one before, up to MaxWait. One
// minute is the window of most per-minute request and token limits.
const (
	DefaultWait = time.Minute
	MaxWait     = 30 * time.Minute
)

// Block is an account whose quota is spent until a reset.
type Block struct {
	Account  string    `json:"account"`
	Executor string    `json:"executor"`
	Until    time.Time `json:"until"`
	// Reason is the provider's words, as the executor reported them.
	Reason string `json:"reason,omitempty"`
	// Strikes counts the limits met in a row with no reset time given.
	Strikes int `json:"strikes,omitempty"`
	// Known says the provider gave the reset time.
	Known bool `json:"known,omitempty"`
}

// Governor reads and writes the blocks under one directory.
type Governor struct {
	dir string

	mu sync.Mutex
	// seen are the accounts this process saw blocked: only they are
	// worth clearing after a success.
	seen map[string]bool
}

// Open returns the governor of the directory dir, which is made (private
// to the user) when a limit is first recorded.
func Open(dir string) *Governor {
	return &Governor{dir: dir, seen: map[string]bool{}}
}

// Dir is where the blocks are kept.
func (g *Governor) Dir() string { return g.dir }

func (g *Governor) file(account string) string { return filepath.Join(g.dir, account+".json") }

// Blocked reports whether account's quota is spent at now, and until when.
func (g *Governor) Blocked(account string, now time.Time) (Block, bool) {
	b, err := g.read(account)
	if err != nil || !now.Before(b.Until) {
		return Block{}, false
	}
	g.note(account)
	return b, true
}

// Limit records that a call of executor, on account, met its limit at
// now, and returns the block every call of the account now waits for: a
// block already recorded by another run that ends later stands; hint is
// the provider's wait (0 when it gave none, then DefaultWait, doubled per
// strike).
func (g *Governor) Limit(account, executor string, hint time.Duration, reason string, now time.Time) (Block, error) {
	g.note(account)
	var out Block
	err := g.locked(account, func() error {
		prev, _ := g.read(account)
		b := Block{Account: account, Executor: executor, Reason: reason, Known: hint > 0}
		switch {
		case hint > 0:
			b.Until = now.Add(hint)
		case !prev.Known && !prev.Until.IsZero():
			// Limited again: right after the last wait ran out (a strike),
			// or while it runs (another run met the same limit).
			b.Strikes = prev.Strikes
			if !now.Before(prev.Until) {
				b.Strikes++
			}
			b.Until = now.Add(min(MaxWait, DefaultWait<<min(b.Strikes, 10)))
		default:
			b.Until = now.Add(DefaultWait)
		}
		if prev.Until.After(b.Until) {
			b.Until, b.Known = prev.Until, prev.Known
		}
		out = b
		return g.write(b)
	})
	return out, err
}

// Succeeded notes that a call of account was answered: the strikes of an
// expired block are forgotten, so the next limit waits DefaultWait again.
func (g *Governor) Succeeded(account string, now time.Time) {
	g.mu.Lock()
	seen := g.seen[account]
	g.mu.Unlock()
	if !seen {
		return
	}
	_ = g.locked(account, func() error {
		b, err := g.read(account)
		if err != nil || now.Before(b.Until) {
			return err
		}
		return os.Remove(g.file(account))
	})
	g.mu.Lock()
	delete(g.seen, account)
	g.mu.Unlock()
}

func (g *Governor) note(account string) {
	g.mu.Lock()
	g.seen[account] = true
	g.mu.Unlock()
}

func (g *Governor) read(account string) (Block, error) {
	var b Block
	data, err := os.ReadFile(g.file(account))
	if err != nil {
		return b, err
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return Block{}, fmt.Errorf("quota: %s: %w", g.file(account), err)
	}
	return b, nil
}

// write replaces the account's file whole, so that a reader sees the old
// block or the new one.
func (g *Governor) write(b Block) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(g.dir, b.Account+".*.tmp")
	if err != nil {
		return fmt.Errorf("quota: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("quota: %w", err)
	}
	if err := os.Rename(tmp.Name(), g.file(b.Account)); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("quota: %w", err)
	}
	return nil
}

// locked runs fn holding the account's lock, which every process on the
// machine that uses the directory respects.
func (g *Governor) locked(account string, fn func() error) error {
	if _, err := fsx.PrivateDir(g.dir, store.HomeEnv); err != nil {
		return fmt.Errorf("quota: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(g.dir, account+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("quota: %w", err)
	}
	defer f.Close() // closing drops the lock
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if lerr = unix.Flock(int(fd), unix.LOCK_EX); !errors.Is(lerr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if lerr != nil {
		return fmt.Errorf("quota: lock %s: %w", account, lerr)
	}
	if err := fn(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
