package langtest

// A Budget is a fixed lang.Budget. The zero Budget has no total and has
// spent nothing.
type Budget struct {
	total    int64
	hasTotal bool
	spent    int64
}

// NewBudget returns a budget of total tokens of which spent are used.
func NewBudget(total, spent int64) *Budget {
	return &Budget{total: total, hasTotal: true, spent: spent}
}

func (b *Budget) Total() (int64, bool) { return b.total, b.hasTotal }
func (b *Budget) Spent() int64         { return b.spent }
func (b *Budget) Remaining() (int64, bool) {
	if !b.hasTotal {
		return 0, false
	}
	return max(0, b.total-b.spent), true
}
