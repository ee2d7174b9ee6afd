package redischeck

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
)

// Window is what a power loss took from writes acknowledged at a steady
// rate: each write is a key of its own (SET w:<client>:<n>), so a loss is
// found by identity, never by a count.
type Window struct {
	Policy          string        // appendfsync
	Run             time.Duration // how long the clients wrote before the power loss
	Acked, Unknown  int           // writes acknowledged; writes whose reply never came
	Lost            int           // acknowledged writes missing after the restart
	Oldest, Newest  time.Duration // how long before the power loss the oldest and newest lost write was acknowledged (0 if none lost)
	KeptAfterLosses int           // acknowledged writes present that were acknowledged after the oldest lost one (a hole, not a lost tail)
	Loss            string        // what lazyfs dropped
}

func (w Window) String() string {
	s := fmt.Sprintf("appendfsync %-8s %5d acknowledged in %v, %d unknown: %d lost", w.Policy, w.Acked, w.Run.Round(time.Millisecond), w.Unknown, w.Lost)
	if w.Lost > 0 {
		s += fmt.Sprintf(" (acknowledged %v to %v before the power loss; %d kept after the oldest lost)", w.Oldest.Round(time.Millisecond), w.Newest.Round(time.Millisecond), w.KeptAfterLosses)
	}
	return s + "; lazyfs dropped " + w.Loss
}

// MeasureWindow starts a server with appendfsync policy on a lazyfs data
// directory (under parent), has clients write unique keys for run, makes
// the machine lose power while they write, restarts the server from its
// AOF and asks it for every acknowledged key.
func MeasureWindow(parent, policy string, clients int, run time.Duration) (Window, error) {
	w := Window{Policy: policy, Run: run}
	s, err := redisserver.Start(parent, redisserver.WithAppendFsync(policy), redisserver.OnLazyFS())
	if err != nil {
		return w, err
	}
	defer s.Stop()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: time.Second, WriteTimeout: time.Second, PoolSize: clients})
	defer c.Close()
	type ack struct {
		key string
		at  time.Time
	}
	var (
		mu      sync.Mutex
		acked   []ack
		unknown int
		wg      sync.WaitGroup
	)
	stop := make(chan struct{})
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("w:%d:%d", i, n)
				err := c.Set(context.Background(), k, "1", 0).Err()
				mu.Lock()
				if err == nil {
					acked = append(acked, ack{k, time.Now()})
				} else {
					unknown++
				}
				mu.Unlock()
				if err != nil {
					return // the server is gone: this client's part ends
				}
			}
		}()
	}
	time.Sleep(run)
	at := time.Now()
	loss, err := s.PowerLoss()
	close(stop)
	wg.Wait()
	if err != nil {
		return w, err
	}
	w.Loss = loss.String()
	sort.Slice(acked, func(i, j int) bool { return acked[i].at.Before(acked[j].at) })
	w.Acked, w.Unknown = len(acked), unknown
	var oldest time.Time
	for _, a := range acked {
		n, err := c.Exists(context.Background(), a.key).Result()
		if err != nil {
			return w, fmt.Errorf("asking for %s after the restart: %w", a.key, err)
		}
		switch {
		case n == 0:
			w.Lost++
			if oldest.IsZero() {
				oldest = a.at
				w.Oldest = at.Sub(a.at)
			}
			w.Newest = at.Sub(a.at)
		case !oldest.IsZero():
			w.KeptAfterLosses++
		}
	}
	if w.Acked == 0 {
		return w, errors.New("no write was acknowledged before the power loss")
	}
	return w, nil
}
