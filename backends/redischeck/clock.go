package redischeck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	rcredits "github.com/tollgate/tollgate/impl/redis/credits"
	"github.com/tollgate/tollgate/linearizability"
)

// The clock scenarios: at 30% of the calls the server's wall clock
// (TIME) is stepped, forward by ClockAhead or back by ClockBehind, held so
// for ClockHold under load, and put right (redisserver.StepClock). What
// the tables promise (spec/redis.md §5a):
//
//   - The token bucket never reads the server's clock (every take brings
//     its caller's now): a step changes none of its answers.
//   - The credit table judges leases on its callers' clock too; the
//     server's clock only bounds that clock: a sweep or a renewal whose
//     now runs more than MaxClockAheadMs ahead of TIME is refused
//     (ErrClockAhead) and writes nothing. A forward step widens the bound
//     (a sweep at now + ClockAhead/2 is accepted while it holds); a step
//     back by more than MaxClockAheadMs refuses every renewal and sweep
//     of correctly set callers until it is put right: no lease is
//     changed, no reservation freed, only holders that cannot renew.
//
// Each row asserts that the step hit (TIME read before and after it,
// within a second of the step) and that the probe table answered as
// promised before, during and after it; both tables' histories must be
// linearizable with no acknowledged write lost or applied twice.
func clockScenarios() []Scenario {
	return []Scenario{
		{Name: "clock-forward", What: fmt.Sprintf("the server's clock (TIME) stepped %v forward at 30%% of the calls, held %v, put back: the token bucket never reads it; the credit table's bound on its callers' clocks widens with it (a sweep %v ahead accepted), nothing else changes", ClockAhead, ClockHold, ClockAhead/2),
			Clock: ClockAhead, endShare: 0.8, inject: stepClock},
		{Name: "clock-back", What: fmt.Sprintf("the server's clock (TIME) stepped %v back at 30%% of the calls, held %v, put right: more than MaxClockAheadMs, so the credit table refuses every renewal and sweep of a correctly set caller (ErrClockAhead, nothing written) until it is right again; the token bucket never reads it", ClockBehind, ClockHold),
			Clock: -ClockBehind, endShare: 0.8, inject: stepClock},
	}
}

const (
	// ClockAhead is clock-forward's step.
	ClockAhead = time.Hour
	// ClockBehind is clock-back's step: more than MaxClockAheadMs.
	ClockBehind = time.Minute
	// ClockHold is how long a step holds.
	ClockHold = 1500 * time.Millisecond
	// clockSlack is how far from the step TIME may read, measured
	// through a round trip on a loaded machine.
	clockSlack = time.Second
)

// clockFault is what a clock scenario's step did and what its probe table
// answered.
type clockFault struct {
	measured            bool
	before, during, end time.Duration // TIME's skew before the step, while it held, once put right
	probe               []string      // the probe's answers that broke the promise
	seen                []string      // what the probe found
}

// clockProbe is the credit table the clock scenarios ask directly, beside the
// recording: a sweep or a renewal at a chosen now.
type clockProbe struct {
	t *rcredits.Table
	h *rcredits.Holder
}

func openProbe(addr string, timeout time.Duration) (*clockProbe, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*timeout)
	defer cancel()
	t, err := opening(func() (*rcredits.Table, error) {
		return rcredits.New(ctx, &goredis.Options{Addr: addr, ReadTimeout: timeout, WriteTimeout: timeout}, "tollgate-clock-probe")
	})
	if err != nil {
		return nil, err
	}
	return &clockProbe{t: t, h: rcredits.NewHolder()}, nil
}

// ask renews the probe's holder (renew) or sweeps at the machine's clock
// plus ahead, and reports whether the table refused it as running ahead
// of the server's clock; another error is returned.
func (p *clockProbe) ask(renew bool, ahead time.Duration) (refused bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	now := time.Now().Add(ahead).UnixMilli()
	if renew {
		_, err = p.t.RenewAt(ctx, now, p.h, 1000)
	} else {
		_, err = p.t.SweepAt(ctx, now)
	}
	if errors.Is(err, rcredits.ErrClockAhead) {
		return true, nil
	}
	return false, err
}

// expect asks and notes the answer, and a break of the promise if it is
// not want (refused or not).
func (c *clockFault) expect(p *clockProbe, when string, renew bool, ahead time.Duration, refuse bool) error {
	refused, err := p.ask(renew, ahead)
	if err != nil {
		return fmt.Errorf("the probe %s: %w", when, err)
	}
	what := "a sweep"
	if renew {
		what = "a renewal"
	}
	if ahead != 0 {
		what += fmt.Sprintf(" %v ahead", ahead)
	}
	got := map[bool]string{true: "refused", false: "accepted"}
	c.seen = append(c.seen, fmt.Sprintf("%s %s %s", what, when, got[refused]))
	if refused != refuse {
		c.probe = append(c.probe, fmt.Sprintf("%s %s was %s, the promise says %s", what, when, got[refused], got[refuse]))
	}
	return nil
}

// stepClock is the clock scenarios' fault: s.Clock's step, probed before,
// while it holds and after.
func stepClock(e *env) error {
	d := e.clockStep
	p, err := openProbe(e.primary.Addr, e.timeout)
	if err != nil {
		return err
	}
	defer p.t.Close()
	c := &e.clk
	// Forward, the probe sweeps at half the step ahead: refused before
	// and after, accepted while it holds. Back, it renews and sweeps at
	// the machine's clock: accepted before and after, refused while it
	// holds.
	renew, ahead := true, time.Duration(0)
	if d > 0 {
		renew, ahead = false, d/2
	}
	if err := c.expect(p, "before the step", renew, ahead, d > 0); err != nil {
		return err
	}
	if !e.Strike(0.3) {
		return nil
	}
	if c.before, err = e.primary.ClockSkew(); err != nil {
		return err
	}
	if !e.noStep {
		if err := e.primary.StepClock(d); err != nil {
			return err
		}
	}
	e.Throttle(ClockHold / time.Duration(0.4*float64(e.Total)))
	if c.during, err = e.primary.ClockSkew(); err != nil {
		return err
	}
	if err := c.expect(p, "while it held", renew, ahead, d < 0); err != nil {
		return err
	}
	if d < 0 {
		if err := c.expect(p, "while it held", false, 0, true); err != nil {
			return err
		}
	}
	time.Sleep(ClockHold)
	e.Throttle(0)
	if err := e.primary.StepClock(0); err != nil && !e.noStep {
		return err
	}
	if c.end, err = e.primary.ClockSkew(); err != nil {
		return err
	}
	if err := c.expect(p, "once put right", renew, ahead, d > 0); err != nil {
		return err
	}
	c.measured = true
	e.Note = c.String()
	return nil
}

func (c clockFault) String() string {
	return fmt.Sprintf("TIME ran %v ahead of the machine's clock before the step, %v while it held, %v once put right; the probe table: %s",
		c.before.Round(time.Millisecond), c.during.Round(time.Millisecond), c.end.Round(time.Millisecond), strings.Join(c.seen, ", "))
}

// clockBound is the clock rows' own check (faultrun.Job.Bound): the step
// hit (TIME moved by it, within clockSlack, and came back), and the probe
// answered as the promise says.
func clockBound(e *env) (found, broken string) {
	c := e.clk
	if !c.measured {
		return "", "the clock step was not measured"
	}
	var breaks []string
	if off := c.during - c.before - e.clockStep; off < -clockSlack || off > clockSlack {
		breaks = append(breaks, fmt.Sprintf("the step did not hit: TIME moved %v, the step was %v", (c.during-c.before).Round(time.Millisecond), e.clockStep))
	}
	if c.end < -clockSlack || c.end > clockSlack {
		breaks = append(breaks, fmt.Sprintf("TIME was not put right: %v off", c.end.Round(time.Millisecond)))
	}
	breaks = append(breaks, c.probe...)
	return "", strings.Join(breaks, "; ")
}

// clockAheadNotRun marks a refusal for a clock running ahead of the
// server's as a call that ran nothing (the library checks the clock before
// its first write): the recording's call is sent again later, and not
// recorded if it never runs. The credit adapter renews a new holder's
// lease at the machine's clock, which a server clock stepped back refuses.
func clockAheadNotRun(err error) error {
	if err != nil && strings.Contains(err.Error(), "runs ahead of the server's clock") {
		return fmt.Errorf("%w: %w", linearizability.ErrNotRun, err)
	}
	return err
}
