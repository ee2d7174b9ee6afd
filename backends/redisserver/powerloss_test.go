package redisserver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestPowerLossReachesFsync: on a lazyfs data directory, a power loss
// keeps every write acknowledged under appendfsync always and drops those
// under appendfsync no (Redis never fsyncs them), where a process kill
// (Crash) drops nothing: the test a kill cannot make.
func TestPowerLossReachesFsync(t *testing.T) {
	for _, policy := range []string{"always", "no"} {
		t.Run(policy, func(t *testing.T) {
			s := StartT(t, WithAppendFsync(policy), OnLazyFS())
			if got, err := s.QueryList("CONFIG", "GET", "appendfsync"); err != nil || len(got) != 2 || got[1] != policy {
				t.Fatalf("CONFIG GET appendfsync: %q, %v", got, err)
			}
			const n = 50
			for i := range n {
				if r, err := s.Do("INCR", "k"); err != nil || r != ":"+strconv.Itoa(i+1) {
					t.Fatalf("INCR %d: %q, %v", i, r, err)
				}
			}
			// A process kill keeps everything, whatever the policy.
			if err := s.Crash(); err != nil {
				t.Fatal(err)
			}
			if err := s.Restart(); err != nil {
				t.Fatal(err)
			}
			if v, err := s.Query("GET", "k"); err != nil || v != strconv.Itoa(n) {
				t.Fatalf("after a kill and restart: GET k = %q, %v; want %d", v, err, n)
			}
			if r, err := s.Do("SET", "after", "x"); err != nil || r != "+OK" {
				t.Fatalf("SET: %q, %v", r, err)
			}
			loss, err := s.PowerLoss()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("appendfsync %s: the power loss dropped %v", policy, loss)
			k, err := s.Query("GET", "k")
			if err != nil {
				t.Fatal(err)
			}
			a, err := s.Query("GET", "after")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case policy == "always" && (k != strconv.Itoa(n) || a != "x"):
				t.Fatalf("appendfsync always lost acknowledged writes: k = %q (want %d), after = %q (want x)", k, n, a)
			case policy == "no" && (k != "" || a != ""):
				t.Fatalf("appendfsync no kept writes Redis never fsynced: k = %q, after = %q (want both gone)", k, a)
			}
		})
	}
}

func TestPowerLossNeedsLazyFS(t *testing.T) {
	s := StartT(t, WithAOF())
	if _, err := s.PowerLoss(); err == nil {
		t.Fatal("PowerLoss of a server not on lazyfs: no error")
	}
}

func TestAppendFsyncPolicyIsChecked(t *testing.T) {
	_, err := Start(t.TempDir(), WithAppendFsync("sometimes"))
	if err == nil || errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Start with appendfsync sometimes: %v, want an error naming the policy", err)
	}
	if want := fmt.Sprintf("%q", "sometimes"); !strings.Contains(err.Error(), want) {
		t.Fatalf("the error %q does not name the policy", err)
	}
}
