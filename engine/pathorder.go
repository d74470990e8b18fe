package engine

import "strings"

// lessPath orders call paths as a reader expects: element by element, with
// numbers compared as numbers, so /par.0/2 comes before /par.0/10.
func lessPath(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] != bs[i] {
			return lessNatural(as[i], bs[i])
		}
	}
	return len(as) < len(bs)
}

// lessNatural compares strings with digit runs compared by value.
func lessNatural(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// groupOrder is what orders a group of causes (failed calls, script
// errors) for a reader: the group that counts the rest last, then the most
// frequent, then by first path, then by message.
type groupOrder struct {
	rest      bool
	count     int
	firstPath string
	message   string
}

func (a groupOrder) compare(b groupOrder) int {
	switch {
	case a.rest != b.rest:
		if a.rest {
			return 1
		}
		return -1
	case a.count != b.count:
		return b.count - a.count
	case lessPath(a.firstPath, b.firstPath):
		return -1
	case lessPath(b.firstPath, a.firstPath):
		return 1
	}
	return strings.Compare(a.message, b.message)
}
