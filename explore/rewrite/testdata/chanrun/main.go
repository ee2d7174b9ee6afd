// Chanrun uses goroutines, channels and select in the forms the rewrite
// turns into explore/rt's; run rewritten with no explorer, it must print
// what it prints as written.
package main

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

type ticket int64

type tickets chan ticket

type box struct {
	in  chan int
	out chan<- string
}

func (b *box) pump(prefix string, n int, done func()) {
	defer done()
	for v := range b.in {
		b.out <- fmt.Sprint(prefix, v*n)
	}
}

func sum(xs ...int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

func main() {
	// Unbuffered handoff, go with arguments evaluated at the statement.
	ch := make(chan int)
	x := 1
	go func(v int) { ch <- v * 10 }(x)
	x = 2
	fmt.Println("handoff", <-ch, x)

	// A go statement of a method value, a constant and a variadic call.
	out := make(chan string, 8)
	b := &box{in: make(chan int), out: out}
	var wg sync.WaitGroup
	wg.Add(1)
	go b.pump("p", 3, wg.Done)
	for i := 0; i < 3; i++ {
		b.in <- i
	}
	close(b.in)
	wg.Wait()
	close(out)
	var got []string
	for s := range out {
		got = append(got, s)
	}
	fmt.Println("pump", got, len(out), cap(out))
	res := make(chan int, 1)
	nums := []int{1, 2, 3}
	go func(xs ...int) { res <- sum(xs...) }(nums...)
	fmt.Println("variadic", <-res)
	go func(a, b int) {
		res <- a + b
	}(
		1,
		x,
	)
	fmt.Println("multiline", <-res)

	// Comma-ok receives, closed channels, named channel types.
	tk := make(tickets, 2)
	tk <- 7
	tk <- ticket(8)
	close(tk)
	v, ok := <-tk
	var w, ok2 = <-tk
	var z ticket
	z, ok3 := <-tk
	fmt.Println("tickets", v, ok, w, ok2, z, ok3, len(tk))
	var recvOnly <-chan ticket = tk
	for t := range recvOnly {
		fmt.Println("never", t)
	}

	// Select: default, constants to a typed channel, nil, a ready case.
	c64 := make(chan int64, 1)
	tk2 := make(tickets, 1)
	errs := make(chan error, 1)
	var nilc chan int
	select {
	case c64 <- 5:
		fmt.Println("select sent 5")
	case nilc <- 1:
		fmt.Println("never")
	}
	select {
	case tk2 <- 3:
		fmt.Println("select sent ticket", <-tk2)
	}
	select {
	case errs <- nil:
		fmt.Println("select sent nil")
	default:
		fmt.Println("never")
	}
	select {
	case v := <-nilc:
		fmt.Println("never", v)
	default:
		fmt.Println("select default")
	}
	select {
	case n, ok := <-c64:
		fmt.Println("select got", n, ok, <-errs == nil)
	}
	var sendOnly chan<- int64 = c64
	fmt.Println("sendonly len", len(sendOnly))

	// Send on a closed channel and close of a closed one panic.
	for _, f := range []func(){
		func() { c := make(chan int, 1); close(c); c <- 1 },
		func() { c := make(chan int); close(c); close(c) },
		func() { var c chan int; close(c) },
	} {
		func() {
			defer func() { fmt.Println("panic", recover()) }()
			f()
		}()
	}

	// Many goroutines and a result gathered over a channel.
	results := make(chan int)
	for i := 0; i < 5; i++ {
		go func() { results <- i * i }()
	}
	var sq []int
	for range 5 {
		sq = append(sq, <-results)
	}
	sort.Ints(sq)
	fmt.Println("squares", sq, errors.Is(nil, nil))
}
