package redissut

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/model"
)

// hostilePayloads are payloads that would break a script that spliced its
// arguments into its source, or a codec that stopped at a NUL.
var hostilePayloads = []string{
	"", "'", `"`, "]]", "]=]", "\x00", "a\x00b", "\n", "\r\n", "--", "end",
	"'); redis.call('FLUSHALL'); --", "]] redis.call('FLUSHALL') [[",
	"\xff\xfe", "ÿ", "%s%d", "\\", strings.Repeat("x", 1<<16),
}

// crGen draws model inputs for the differential test: mostly well-formed
// operations on tokens the table issued, and stale, foreign and never-issued
// ones among them.
type crGen struct {
	r       *rand.Rand
	tokens  []model.Token
	holders map[model.Token]model.HolderID
	serial  int
}

func (g *crGen) token() model.Token {
	if len(g.tokens) == 0 || g.r.IntN(10) == 0 {
		slot := 1 + g.r.IntN(model.Slots)
		return model.Token{Slot: slot, Epoch: 1 + uint64(g.r.IntN(len(g.tokens)+3))}
	}
	// Recent tokens more often than old (stale) ones.
	i := len(g.tokens) - 1 - min(g.r.IntN(len(g.tokens)), g.r.IntN(len(g.tokens)))
	return g.tokens[i]
}

func (g *crGen) holderFor(tok model.Token) model.HolderID {
	if h, ok := g.holders[tok]; ok && g.r.IntN(6) != 0 {
		return h
	}
	return model.HolderID(1 + g.r.IntN(4))
}

func (g *crGen) next(closeOK bool) model.CrInput[string] {
	k := g.r.IntN(100)
	switch {
	case k < 25:
		return model.CrInput[string]{Kind: model.CrReserve, Holder: model.HolderID(1 + g.r.IntN(4)), Class: model.Class(1 + g.r.IntN(3)/2)}
	case k < 45:
		tok := g.token()
		g.serial++
		p := fmt.Sprintf("p%d", g.serial)
		if g.r.IntN(3) == 0 {
			p += hostilePayloads[g.r.IntN(len(hostilePayloads))]
		}
		return model.CrInput[string]{Kind: model.CrEnqueue, Holder: g.holderFor(tok), Token: tok, Payload: p, NowMs: int64(g.r.IntN(40)) - 5}
	case k < 58:
		return model.CrInput[string]{Kind: model.CrTake, Token: g.token()}
	case k < 70:
		return model.CrInput[string]{Kind: model.CrFinish, Token: g.token()}
	case k < 82:
		tok := g.token()
		return model.CrInput[string]{Kind: model.CrRelease, Holder: g.holderFor(tok), Token: tok}
	case k < 88:
		return model.CrInput[string]{Kind: model.CrSweep, NowMs: int64(g.r.IntN(1000))}
	case k < 93:
		return model.CrInput[string]{Kind: model.CrExit, Holder: model.HolderID(1 + g.r.IntN(6))}
	case k < 95:
		return model.CrInput[string]{Kind: model.CrEnqueued}
	case k < 97:
		return model.CrInput[string]{Kind: model.CrSnapshot}
	case k < 98:
		return model.CrInput[string]{Kind: model.CrBounds}
	case closeOK:
		return model.CrInput[string]{Kind: model.CrClose}
	}
	return model.CrInput[string]{Kind: model.CrSnapshot}
}

func redisClient(t *testing.T) *goredis.Client {
	t.Helper()
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	return c
}

// crDiff runs seeds random sequences of steps operations on fresh tables
// (named prefix/seed) beside model.Credits.Step, comparing every answer and,
// after every step, the snapshot and the enqueued list. It returns the
// first disagreement.
func crDiff(ctx context.Context, f fault.Fault, c *goredis.Client, prefix string, seeds, steps int) (disagree, err error) {
	for seed := 0; seed < seeds; seed++ {
		s, err := NewCredits(f, c, fmt.Sprintf("%s/%d", prefix, seed))
		if err != nil {
			return nil, err
		}
		defer s.Close()
		g := &crGen{r: rand.New(rand.NewPCG(uint64(seed), 13)), holders: map[model.Token]model.HolderID{}}
		var m model.Credits[string]
		var hist []string
		for i := 0; i < steps; i++ {
			in := g.next(i > steps*3/4)
			hist = append(hist, in.String())
			next, want := m.Step(in)
			got, err := s.Apply(ctx, in)
			if err != nil {
				return nil, err
			}
			if !want.Equal(got) {
				return fmt.Errorf("seed %d step %d: %v: the model answers %s, Redis %s\nhistory:\n%s",
					seed, i, in, want.Answer(in.Kind), got.Answer(in.Kind), strings.Join(hist, "\n")), nil
			}
			m = next
			if in.Kind == model.CrReserve && got.Result == model.OK {
				g.tokens = append(g.tokens, got.Token)
				g.holders[got.Token] = in.Holder
			}
			for _, k := range []model.CrKind{model.CrSnapshot, model.CrEnqueued} {
				q := model.CrInput[string]{Kind: k}
				_, want := m.Step(q)
				got, err := s.Apply(ctx, q)
				if err != nil {
					return nil, err
				}
				if !want.Equal(got) {
					return fmt.Errorf("seed %d after step %d: %v: the model answers %s, Redis %s\nhistory:\n%s",
						seed, i, q, want.Answer(k), got.Answer(k), strings.Join(hist, "\n")), nil
				}
			}
		}
	}
	return nil, nil
}

// TestRedisCreditsAgreesWithModel: seeded random sequences, with stale and
// foreign tokens, exits, sweeps, hostile payloads and a close near the end,
// answer exactly as model.Credits.Step does.
func TestRedisCreditsAgreesWithModel(t *testing.T) {
	c := redisClient(t)
	disagree, err := crDiff(context.Background(), fault.None, c, t.Name(), 16, 150)
	if err != nil {
		t.Fatal(err)
	}
	if disagree != nil {
		t.Fatal(disagree)
	}
}

// TestRedisCreditsMutantsKilled: the differential test tells every mutant
// of impl/redis/credits from the model.
func TestRedisCreditsMutantsKilled(t *testing.T) {
	build.Need(t)
	c := redisClient(t)
	for _, f := range fault.AllRedis() {
		if !f.Credits() {
			continue
		}
		disagree, err := crDiff(context.Background(), f, c, t.Name()+"/"+f.String(), 16, 150)
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if disagree == nil {
			t.Errorf("%v: 16 sequences of 150 steps agree with the model", f)
			continue
		}
		t.Logf("%v killed: %s", f, strings.SplitN(disagree.Error(), "\n", 2)[0])
	}
}

// TestRedisCreditsDefects: the adapter's defects panic as the table's do.
func TestRedisCreditsDefects(t *testing.T) {
	build.Need(t)
	c := redisClient(t)
	s, err := NewCredits(fault.None, c, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []model.CrInput[string]{
		{Kind: model.CrReserve, Holder: 0, Class: model.General},
		{Kind: model.CrReserve, Holder: 1, Class: 3},
		{Kind: model.CrTake, Token: model.Token{Slot: 33, Epoch: 1}},
		{Kind: model.CrFinish, Token: model.Token{Slot: 1}},
		{Kind: model.CrRelease, Holder: 1, Token: model.Token{Slot: 0, Epoch: 1}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%v: no panic", in)
				}
			}()
			s.Apply(context.Background(), in)
		}()
	}
	for _, f := range []fault.Fault{fault.Named("cr-no-epoch-pin"), fault.Named("rtb-two-trips")} {
		if _, err := NewCredits(f, c, t.Name()); err == nil {
			t.Fatalf("%v was accepted for the Redis credit table", f)
		}
	}
}
