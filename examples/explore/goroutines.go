package counter

import "sync"

// Relay has two goroutines take turns incrementing one plain counter,
// handing the turn back and forth over an unbuffered channel: each
// increment happens before the send that hands the turn over, which
// happens before the receive that takes it, so no two increments race.
// With early set the worker increments before it has the turn (a
// handoff removed): its increment races with the caller's.
type Relay struct {
	n     int
	early bool
}

// Run plays rounds turns each and returns the count.
func (r *Relay) Run(rounds int) int {
	turn := make(chan struct{})
	done := make(chan struct{})
	go func() {
		for i := 0; i < rounds; i++ {
			if r.early {
				r.n++ // the worker's increment, without the turn
				<-turn
			} else {
				<-turn
				r.n++ // the worker's increment, with the turn
			}
			turn <- struct{}{}
		}
		close(done)
	}()
	for i := 0; i < rounds; i++ {
		r.n++ // the caller's increment
		turn <- struct{}{}
		<-turn
	}
	<-done
	return r.n
}

// Visits counts a visit by the caller and one by a worker it starts, and
// waits for the worker: the WaitGroup orders the worker's increment
// before the caller's read, but nothing orders the two increments.
type Visits struct{ n int }

// Both counts the two visits and returns the count.
func (v *Visits) Both() int {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		v.n++ // the worker's visit
	}()
	v.n++ // the caller's visit
	wg.Wait()
	return v.n
}

// LockedVisits is Visits with the count under a mutex: correct.
type LockedVisits struct {
	mu sync.Mutex
	n  int
}

// Both counts the two visits and returns the count.
func (v *LockedVisits) Both() int {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		v.mu.Lock()
		v.n++
		v.mu.Unlock()
	}()
	v.mu.Lock()
	v.n++
	v.mu.Unlock()
	wg.Wait()
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.n
}

// First asks two sources at once and returns the first answer. With an
// unbuffered channel the slower source's goroutine waits forever to send
// its answer, which nobody receives: a goroutine leak. Buffered with room
// for both answers (Buffered), nothing waits.
type First struct{ Buffered bool }

// Ask returns the first of a's and b's answers.
func (f First) Ask(a, b func() int) int {
	size := 0
	if f.Buffered {
		size = 2
	}
	ch := make(chan int, size)
	go func() { ch <- a() }() // the first source
	go func() { ch <- b() }() // the second source
	return <-ch
}

// Pick has two values ready, on two channels, and a select that takes
// one: Go chooses among ready cases at random, so either may come out.
func Pick() string {
	a, b := make(chan string, 1), make(chan string, 1)
	a <- "a"
	b <- "b"
	select {
	case v := <-a:
		return v
	case v := <-b:
		return v
	}
}

// Notifier sends notifications on a buffered channel until it is
// stopped. Stop closes the channel; a Notify racing with Stop sends on a
// closed channel, which panics.
type Notifier struct{ ch chan int }

// NewNotifier returns a notifier with room for n notifications.
func NewNotifier(n int) *Notifier { return &Notifier{ch: make(chan int, n)} }

// Notify sends v.
func (n *Notifier) Notify(v int) { n.ch <- v }

// Stop closes the channel and drains it, returning how many were sent.
func (n *Notifier) Stop() int {
	close(n.ch)
	k := 0
	for range n.ch {
		k++
	}
	return k
}
