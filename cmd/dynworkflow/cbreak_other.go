//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "errors"

func cbreak(int) (func(), error) {
	return nil, errors.New("questions in the terminal are not supported here")
}

const canCbreak = false
