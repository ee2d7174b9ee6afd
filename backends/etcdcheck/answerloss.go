package etcdcheck

import (
	"context"
	"fmt"
	"net/url"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/backends/faultrun"
	"github.com/tollgate/tollgate/backends/netproxy"
	"github.com/tollgate/tollgate/impl/etcd/econn"
)

// The answer-loss fault: the recording's client reaches each member
// through a proxy of its own (clientLinks), and at the strike every proxy
// holds what the members send while what they are sent still reaches
// them (netproxy's Deafen). Requests are served and committed, their
// answers go nowhere; after the hold every client connection is reset and
// the held answers dropped. A call whose request ran is then one whose
// outcome the client cannot know: the table must say so (ErrUnknown),
// and must not run it again. The fault is checked to have lost the answer
// of at least one committed write: the store's revision, read through a
// client of its own once the answers are held, must have moved by the
// reset. When it has not (the writes in flight were still reading, and
// their reads' answers are held too), the held answers are let go, late
// but whole, and the fault holds them again at the next write in flight,
// a little later into the call each time, for answerRetry, until a
// committed write's answer is lost. Its strike
// is stamped at the reset, when the committed write whose answer it drops
// is in flight.

// clientLinks are the recording client's proxies, one per member, and a
// client of the members' own addresses that reads the store's revision.
type clientLinks struct {
	proxies []*netproxy.Proxy
	direct  *clientv3.Client
	from    int64 // the revision read once the answers were held
	lost    int64 // the writes committed while they were
	tries   int   // the holds it took
}

// newClientLinks puts a proxy in front of each of cl's members' client
// addresses.
func newClientLinks(cl *etcdserver.Cluster) (*clientLinks, error) {
	k := &clientLinks{}
	for _, ep := range cl.Endpoints() {
		u, err := url.Parse(ep)
		if err != nil {
			k.close()
			return nil, fmt.Errorf("etcdcheck: the client address %q: %w", ep, err)
		}
		p, err := netproxy.New(u.Host, netproxy.Options{})
		if err != nil {
			k.close()
			return nil, err
		}
		k.proxies = append(k.proxies, p)
	}
	direct, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: 2 * time.Second})
	if err != nil {
		k.close()
		return nil, err
	}
	k.direct = direct
	return k, nil
}

// endpoints are the proxies' addresses, for the recording's client.
func (k *clientLinks) endpoints() []string {
	eps := make([]string, len(k.proxies))
	for i, p := range k.proxies {
		eps[i] = "http://" + p.Addr()
	}
	return eps
}

func (k *clientLinks) close() {
	for _, p := range k.proxies {
		p.Close()
	}
	if k.direct != nil {
		k.direct.Close()
	}
}

// revision is the store's revision now (a linearizable read, past every
// write committed before it began).
func (k *clientLinks) revision() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Recovery)
	defer cancel()
	r, err := k.direct.Get(ctx, "tollgate-answer-loss-probe", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("reading the store's revision: %w", err)
	}
	return r.Header.Revision, nil
}

// deafen holds the members' answers to the recording's client, then
// reads the revision: a write committed past it was answered while the
// answers were held.
func (k *clientLinks) deafen() error {
	for _, p := range k.proxies {
		p.Deafen()
	}
	from, err := k.revision()
	if err != nil {
		k.reset()
		return err
	}
	k.from = from
	return nil
}

// answerRetry is how long the answers are held again when the first hold
// saw no write commit, and answerStep how much later into the call each
// try holds them, over answerSteps tries.
const (
	answerRetry = 100 * time.Millisecond
	answerStep  = 500 * time.Microsecond
	answerSteps = 10
)

// lose reads how far the revision moved while the answers were held; if
// it moved, it stamps the strike (a write whose answer is held is in
// flight) and resets every client connection, dropping the answers. If
// not, it lets them go, waits for the next write in flight, and holds
// them again, until one has. It fails if the recording ends first: the
// fault lost no answer.
func (k *clientLinks) lose(r *faultrun.Run) error {
	for k.tries = 1; ; k.tries++ {
		to, err := k.revision()
		if err != nil {
			k.reset()
			return err
		}
		if k.lost = to - k.from; k.lost > 0 {
			struck := r.StrikeNow()
			k.reset()
			if !struck {
				return fmt.Errorf("the recording ended before the answers were dropped")
			}
			return nil
		}
		for _, p := range k.proxies {
			p.Hear()
		}
		if !r.AwaitWrite() {
			return fmt.Errorf("no write committed while the answers were held, in %d tries: no answer was lost", k.tries)
		}
		// A call that reads before it commits (every credit-table call
		// does) is still reading when the write begins: its read's
		// answer held, it never sends the commit. So each try holds the
		// answers later into the call than the one before, by
		// answerStep, up to a few milliseconds, then starts over.
		time.Sleep(time.Duration(k.tries%answerSteps) * answerStep)
		if err := k.deafen(); err != nil {
			return err
		}
		time.Sleep(answerRetry)
	}
}

func (k *clientLinks) reset() {
	for _, p := range k.proxies {
		p.Reset()
	}
}

// told says what the fault did.
func (k *clientLinks) told() string {
	writes := "the answers of %d writes"
	if k.lost == 1 {
		writes = "the answer of %d write"
	}
	return fmt.Sprintf("answer-loss dropped "+writes+" committed while held (hold %d)", k.lost, k.tries)
}
