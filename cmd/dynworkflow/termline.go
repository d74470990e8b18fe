package main

import (
	"regexp"
	"strings"
)

// style is the colour of a piece of a terminal line.
type style uint8

const (
	styleNone style = iota
	styleBold
	styleDim
	styleGreen
	styleYellow
	styleRed
	styleCyan
)

var sgr = [...]string{
	styleBold:   "\x1b[1m",
	styleDim:    "\x1b[2m",
	styleGreen:  "\x1b[32m",
	styleYellow: "\x1b[33m",
	styleRed:    "\x1b[31m",
	styleCyan:   "\x1b[36m",
}

// seg is a piece of a line in one style. Its text holds no control
// characters: callers escape what comes from scripts and agents.
type seg struct {
	text  string
	style style
}

// line is a terminal line built of styled pieces, so that it can be cut
// to a width before colour codes go in.
type line []seg

// fit cuts the line to width columns.
func (l line) fit(width int) line {
	out := make(line, 0, len(l))
	left := width
	for _, s := range l {
		if left <= 0 {
			break
		}
		w := textWidth(s.text)
		if w > left {
			out = append(out, seg{cutWidth(s.text, left), s.style})
			break
		}
		out = append(out, s)
		left -= w
	}
	return out
}

// render writes the line, in colour or not.
func (l line) render(color bool) string {
	var b strings.Builder
	for _, s := range l {
		if color && s.style != styleNone {
			b.WriteString(sgr[s.style])
			b.WriteString(s.text)
			b.WriteString("\x1b[0m")
			continue
		}
		b.WriteString(s.text)
	}
	return b.String()
}

// renderRegion joins the live region's lines; the cursor stays at the end
// of the last one, so that the region can be erased from there.
func renderRegion(lines []line, color bool) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = l.render(color)
	}
	return strings.Join(parts, "\n")
}

var ansiCSI = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// stripANSI removes the colour codes render adds.
func stripANSI(s string) string { return ansiCSI.ReplaceAllString(s, "") }
