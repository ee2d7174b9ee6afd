package mainjob

import (
	"errors"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/backends/faultrun"
	"github.com/tollgate/tollgate/linearizability"
)

// runTries runs a window again while a try checked nothing (its fault
// found no write in flight, or the harness could not do or undo it), at
// most soakStrikeTries times, and never runs again a try that found a
// violation or passed.
func TestRunTries(t *testing.T) {
	ok := faultrun.Row{Scenario: "kill", MustStrike: true, Struck: true, InFlight: 2, Result: linearizability.Ok}
	missed := faultrun.Row{Scenario: "kill", MustStrike: true, Struck: true, Result: linearizability.Ok}
	lost := faultrun.Row{Scenario: "kill", MustStrike: true, Struck: true, InFlight: 1, Result: linearizability.Ok, Lost: 1}
	notRun := errors.New("cluster: not a primary of a whole cluster within 10s")
	type try struct {
		r   faultrun.Row
		err error
	}
	for _, c := range []struct {
		name    string
		tries   []try
		runs    int
		wantErr bool
		want    faultrun.Row
	}{
		{"passed at once", []try{{ok, nil}}, 1, false, ok},
		{"a loss at once", []try{{lost, nil}, {ok, nil}}, 1, false, lost},
		{"not run, then passed", []try{{faultrun.Row{}, notRun}, {ok, nil}}, 2, false, ok},
		{"missed, then a loss", []try{{missed, nil}, {lost, nil}, {ok, nil}}, 2, false, lost},
		{"not run three times", []try{{faultrun.Row{}, notRun}, {faultrun.Row{}, notRun}, {faultrun.Row{}, notRun}, {ok, nil}}, 3, true, faultrun.Row{}},
		{"missed three times", []try{{missed, nil}, {missed, nil}, {missed, nil}, {ok, nil}}, 3, false, missed},
	} {
		runs := 0
		var log strings.Builder
		r, err := runTries(func(faultrun.Window) (faultrun.Row, error) {
			runs++
			return c.tries[runs-1].r, c.tries[runs-1].err
		}, faultrun.Window{}, &log)
		if runs != c.runs || (err != nil) != c.wantErr || r.Lost != c.want.Lost || r.InFlight != c.want.InFlight {
			t.Errorf("%s: %d runs, row %+v, error %v; want %d runs, row %+v, error %v\n%s", c.name, runs, r, err, c.runs, c.want, c.wantErr, log.String())
		}
		if strings.Count(log.String(), "(try ") != c.runs-1 {
			t.Errorf("%s: the log names %d tries again, want %d:\n%s", c.name, strings.Count(log.String(), "(try "), c.runs-1, log.String())
		}
	}
}
