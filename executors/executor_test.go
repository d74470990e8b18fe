package executors

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// A shortage of descriptors, memory or processes met by our own code is an
// infrastructure failure, however it is wrapped; a classified error keeps
// its class.
func TestClassOf(t *testing.T) {
	tests := []struct {
		err  error
		want Class
	}{
		{&os.SyscallError{Syscall: "pipe2", Err: syscall.EMFILE}, Infrastructure},
		{fmt.Errorf("start codex: %w", &os.SyscallError{Syscall: "fork/exec", Err: syscall.EAGAIN}), Infrastructure},
		{syscall.ENFILE, Infrastructure},
		{syscall.ENOMEM, Infrastructure},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), Transient},
		{&Error{Class: RateLimited, Err: syscall.EMFILE}, RateLimited},
		{syscall.ENOENT, Terminal},
		{fmt.Errorf("the agent said no"), Terminal},
	}
	for _, tc := range tests {
		if got := ClassOf(tc.err); got != tc.want {
			t.Errorf("ClassOf(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
