package tokenbucket

import "context"

// Bound is a Table seen through one limit and one cost, for code in which
// every key of the table shares them (a middleware with one bucket per
// client, say): its methods are the Table's, with the limits and the cost
// filled in and checked once, by Bind, rather than on every call. Bound is
// a small value; copy it freely. Its zero value is not usable: make one with
// Bind. Like the Table it reads, a Bound is safe for concurrent use.
type Bound[K comparable] struct {
	t    *Table[K]
	lim  Limits
	cost float64
}

// Bind returns t seen through lim and cost. It checks them as Take does
// (T9) and returns the same *ArgError, naming the field and the rule, for
// a bad one; then the Bound's methods cannot fail on their arguments.
func (t *Table[K]) Bind(lim Limits, cost float64) (Bound[K], error) {
	if err := check(lim, cost, true); err != nil {
		return Bound[K]{}, err
	}
	return Bound[K]{t: t, lim: lim, cost: cost}, nil
}

// Limits returns the limits b was bound to.
func (b Bound[K]) Limits() Limits { return b.lim }

// Cost returns the cost b takes.
func (b Bound[K]) Cost() float64 { return b.cost }

// Take is Table.Take with b's limits and cost.
func (b Bound[K]) Take(key K) (remaining float64, ok bool) {
	remaining, ok, err := b.table().Take(key, b.lim, b.cost)
	mustNot(err)
	return remaining, ok
}

// Admit is Table.Admit with b's limits and cost: on a refusal, the
// Decision says how long until the take would be admitted.
func (b Bound[K]) Admit(key K) Decision {
	d, err := b.table().Admit(key, b.lim, b.cost)
	mustNot(err)
	return d
}

// Wait is Table.Wait with b's limits and cost: it fails, having taken
// nothing, with ctx's error, or an error wrapping ErrWouldExceedDeadline or
// ErrNever, never with an *ArgError.
func (b Bound[K]) Wait(ctx context.Context, key K) (remaining float64, err error) {
	return b.table().Wait(ctx, key, b.lim, b.cost)
}

// RetryAfter is Table.RetryAfter with b's limits and cost.
func (b Bound[K]) RetryAfter(key K) int64 {
	w, err := b.table().RetryAfter(key, b.lim, b.cost)
	mustNot(err)
	return w
}

// Peek is Table.Peek with b's limits.
func (b Bound[K]) Peek(key K) float64 {
	tokens, err := b.table().Peek(key, b.lim)
	mustNot(err)
	return tokens
}

// table is the bound table, panicking on the zero Bound.
func (b Bound[K]) table() *Table[K] {
	if b.t == nil {
		panic("tokenbucket: the zero Bound is not usable: make one with Table.Bind (defect)")
	}
	return b.t
}

// mustNot panics on an argument error Bind ruled out.
func mustNot(err error) {
	if err != nil {
		panic("tokenbucket: Bound: " + err.Error() + " (defect: Bind checked the arguments)")
	}
}
