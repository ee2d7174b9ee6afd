package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tollgate/tollgate/redisserver"
)

// stopOnSignal stops srv when the command is interrupted or terminated,
// which skips deferred calls: a campaign (or tollgate bench -redis) stopped
// half way leaves no redis-server behind.
func stopOnSignal(srv *redisserver.Server) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		srv.Stop()
		fmt.Fprintf(os.Stderr, "tollgate: %v: stopped redis-server %s\n", s, srv.Addr)
		os.Exit(130)
	}()
}
