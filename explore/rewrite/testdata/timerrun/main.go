// Timerrun uses timers, tickers and contexts in the forms the rewrite
// turns into explore/rt's; run rewritten with no explorer, it must print
// what it prints as written.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

type job struct {
	t *time.Timer
}

func main() {
	t := time.NewTimer(time.Millisecond)
	<-t.C
	fmt.Println("stop after firing", t.Stop())
	fmt.Println("reset", t.Reset(time.Hour))
	stopT := t.Stop
	fmt.Println("stop pending", stopT(), (*time.Timer).Stop(t))
	<-time.After(time.Millisecond)
	fired := make(chan string, 1)
	j := &job{t: time.AfterFunc(time.Millisecond, func() { fired <- "fired" })}
	fmt.Println(<-fired, j.t.Stop())
	tk := time.NewTicker(time.Millisecond)
	<-tk.C
	tk.Reset(2 * time.Millisecond)
	<-tk.C
	tk.Stop()
	<-time.Tick(time.Millisecond)

	ctx, cancel := context.WithCancelCause(context.Background())
	child, cancelChild := context.WithTimeout(ctx, time.Hour)
	defer cancelChild()
	ran := make(chan bool, 1)
	stop := context.AfterFunc(child, func() { ran <- true })
	cancel(errors.New("why"))
	<-child.Done()
	fmt.Println(child.Err(), context.Cause(child), <-ran, stop())
	d, cancelD := context.WithDeadline(context.Background(), time.Now().Add(time.Millisecond))
	defer cancelD()
	<-d.Done()
	fmt.Println(d.Err())
	tc, cancelT := context.WithTimeoutCause(context.Background(), time.Millisecond, errors.New("slow"))
	defer cancelT()
	<-tc.Done()
	dc, cancelDC := context.WithDeadlineCause(context.Background(), time.Now(), errors.New("late"))
	defer cancelDC()
	fmt.Println(context.Cause(tc), context.Cause(dc))
}
