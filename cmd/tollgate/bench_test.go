package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestBenchFlagsRejectBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-benchtime", "-1s"}, "-benchtime = -1s: must not be negative"},
		{[]string{"-rounds", "-2"}, "-rounds = -2: must not be negative"},
		{[]string{"-memkeys", "-5"}, "-memkeys = -5: must not be negative"},
		{[]string{"-run", "("}, `-run = "(": not a regular expression`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		_, err := parseBenchFlags(tc.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tollgate bench: ") {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	o, err := parseBenchFlags([]string{"-full"}, io.Discard)
	if err != nil || o.Benchtime != 100*time.Millisecond || o.Rounds != 3 {
		t.Errorf("-full defaults: %+v, %v", o, err)
	}
}
