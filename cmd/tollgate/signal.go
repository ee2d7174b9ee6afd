package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// stopOnSignal stops srv (a redis-server, or a cluster of them, named by
// what) when the command is interrupted or terminated,
// which skips deferred calls: a campaign (or tollgate bench -redis) stopped
// half way leaves no redis-server behind.
func stopOnSignal(srv interface{ Stop() }, what string) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		srv.Stop()
		fmt.Fprintf(os.Stderr, "tollgate: %v: stopped %s\n", s, what)
		os.Exit(130)
	}()
}
