package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestLimitersBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-libs", "example.com/nope"}, "tollgate limiters: -libs: "},
		{[]string{"-versions", "golang.org/x/time"}, "tollgate limiters: -versions: "},
		{[]string{"-expect", "golang.org/x/time:steady=holds"}, "tollgate limiters: -expect: "},
		// A second bad flag, so that a -shard let through runs no campaign.
		{[]string{"-shard", "3/2", "-expect", "x"}, "tollgate limiters: -shard 3/2: i must be in 1..n"},
		{[]string{"-nope"}, "flag provided but not defined: -nope\nusage: tollgate limiters"},
	} {
		var stderr bytes.Buffer
		if rc := runLimiters(c.args, io.Discard, &stderr); rc != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("limiters %v: exit %d, %q; want 2 and %q", c.args, rc, stderr.String(), c.want)
		}
		// The flag package says what it could not parse; the command says
		// the rest, once.
		said := 1
		if c.args[0] == "-nope" {
			said = 0
		}
		if n := strings.Count(stderr.String(), "tollgate limiters:"); n != said {
			t.Errorf("limiters %v: %d errors of the command, want %d: %q", c.args, n, said, stderr.String())
		}
	}
}

// The help documents -shard: the unit of work and its name.
func TestLimitersHelpShard(t *testing.T) {
	var stderr bytes.Buffer
	if rc := runLimiters([]string{"-h"}, io.Discard, &stderr); rc != 0 {
		t.Errorf("-h: exit %d, want 0 (help asked for; TestHelpConvention)", rc)
	}
	for _, want := range []string{"-shard i/n", "MODULE@VERSION:WORKLOAD", "shards 1/n … n/n together run every\nunit once"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, stderr.String())
		}
	}
}
