// Package etcdexplore explores the etcd-backed tables (impl/etcd/tokenbucket,
// impl/etcd/credits) at the grain of their requests.
//
// etcd applies each request — a range read, a transaction — atomically, at
// one revision; what can interleave is the requests of different clients.
// An operation of the table is a sequence of them (a take reads the bucket
// and the floor, then commits a transaction that compares what it read; a
// reclaim reads the whole table, then commits transactions). So the
// interleavings that matter are the orders of requests, and there are few
// enough to enumerate: the explorer of the in-memory tables
// (internal/interleave) runs the same scenarios here, with each request one
// step. Its client's KV is wrapped (Stepping) so that every request first
// asks the installed scheduler (internal/seam/hooked) for its turn and then
// reports what it sent and what etcd answered; one word stands for the
// whole store, so two requests conflict unless both only read.
//
// A storm of real clients (conform's concurrent suite) meets an
// interleaving that needs one request to land between two others only by
// chance; here every such order within the preemption bound is run, each
// from a fresh table, and a failure is a schedule that replays.
package etcdexplore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdsut"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/seam/hooked"
	"github.com/tollgate/tollgate/linearizability"
)

// Timeout bounds each operation of an explored run. A run's operations
// take milliseconds; the bound only keeps a lost server from hanging the
// exploration.
const Timeout = 10 * time.Second

// store is the one word every request is reported on.
type store struct{ _ byte }

// Remote returns the explorer's remote backend over c, whose KV it wraps
// (Stepping): c must be used for nothing else while an exploration runs.
// Each run gets a table of its own, named name, "-" and the run's number,
// of fault f's package (fault.None: the real one).
func Remote(c *clientv3.Client, f fault.Fault, name string) *interleave.Remote {
	Stepping(c)
	var runs atomic.Int64
	return &interleave.Remote{
		Name: "etcd",
		TokenBucket: func() (linearizability.TBBackend, error) {
			tab := fmt.Sprintf("%s-%d", name, runs.Add(1))
			t, err := etcdsut.NewTokenBucket(f, c, tab)
			if err != nil {
				return nil, err
			}
			return etcdsut.Remote(t.Apply, Timeout), nil
		},
		Credits: func() (linearizability.CrBackend, error) {
			tab := fmt.Sprintf("%s-%d", name, runs.Add(1))
			ctx, cancel := context.WithTimeout(context.Background(), Timeout)
			defer cancel()
			t, err := etcdsut.NewCredits(ctx, f, c, tab)
			if err != nil {
				return nil, err
			}
			return etcdsut.Remote(t.Apply, Timeout), nil
		},
	}
}

// Stepping wraps c's KV so that every request it sends is a step of the
// installed hooked.Scheduler (none installed: it is sent as it is), and
// returns the word the steps are reported on. Each request is reported as a
// load when it only reads, and as a compare-and-swap otherwise (OK when it
// may have written: a transaction that took a branch with a put or a
// delete, or whose outcome is unknown); its values render the request and
// the answer, with the keys relative to their table.
func Stepping(c *clientv3.Client) unsafe.Pointer {
	word := unsafe.Pointer(new(store))
	k := &kv{KV: c.KV, word: word}
	c.KV = k
	c.Lease = &lease{Lease: c.Lease, kv: k}
	return word
}

// lease makes the lease requests the credit table sends steps too: a
// grant, a renewal and a revocation each write the store (a revocation
// deletes the keys attached to the lease).
type lease struct {
	clientv3.Lease
	kv *kv
}

func (l *lease) Grant(ctx context.Context, ttl int64) (r *clientv3.LeaseGrantResponse, err error) {
	l.kv.step(true, fmt.Sprintf("grant a lease of %ds", ttl), func() (bool, string) {
		r, err = l.Lease.Grant(ctx, ttl)
		if err != nil {
			return true, "error: " + err.Error()
		}
		return true, fmt.Sprintf("lease %x", int64(r.ID))
	})
	return r, err
}

func (l *lease) Revoke(ctx context.Context, id clientv3.LeaseID) (r *clientv3.LeaseRevokeResponse, err error) {
	l.kv.step(true, fmt.Sprintf("revoke lease %x", int64(id)), func() (bool, string) {
		r, err = l.Lease.Revoke(ctx, id)
		return true, answerOf(err, "ok")
	})
	return r, err
}

func (l *lease) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (r *clientv3.LeaseKeepAliveResponse, err error) {
	l.kv.step(true, fmt.Sprintf("renew lease %x", int64(id)), func() (bool, string) {
		r, err = l.Lease.KeepAliveOnce(ctx, id)
		return true, answerOf(err, "ok")
	})
	return r, err
}

type kv struct {
	clientv3.KV
	word unsafe.Pointer
}

// step runs one request as a step: Before, the request, After.
func (k *kv) step(writes bool, req string, send func() (wrote bool, answer string)) {
	s := hooked.Current()
	if s == nil {
		send()
		return
	}
	op := hooked.Load
	if writes {
		op = hooked.CAS
	}
	s.Before(k.word, op)
	wrote, answer := send()
	a := hooked.Access{Word: k.word, Op: op, Old: req, New: answer, OK: true}
	if writes {
		a.OK = wrote
	} else {
		a.Old = req + " → " + answer
	}
	s.After(a)
}

func (k *kv) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (r *clientv3.GetResponse, err error) {
	k.step(false, "get "+short(key), func() (bool, string) {
		r, err = k.KV.Get(ctx, key, opts...)
		if err != nil {
			return false, "error: " + err.Error()
		}
		return false, kvsOf(r.Kvs)
	})
	return r, err
}

func (k *kv) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (r *clientv3.PutResponse, err error) {
	k.step(true, "put "+short(key)+"="+value(key, []byte(val)), func() (bool, string) {
		r, err = k.KV.Put(ctx, key, val, opts...)
		return true, answerOf(err, "ok")
	})
	return r, err
}

func (k *kv) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (r *clientv3.DeleteResponse, err error) {
	k.step(true, "delete "+short(key), func() (bool, string) {
		r, err = k.KV.Delete(ctx, key, opts...)
		if err != nil {
			return true, answerOf(err, "")
		}
		return r.Deleted > 0, fmt.Sprintf("%d deleted", r.Deleted)
	})
	return r, err
}

func (k *kv) Do(ctx context.Context, op clientv3.Op) (r clientv3.OpResponse, err error) {
	k.step(writes(op), describeOp(op), func() (bool, string) {
		r, err = k.KV.Do(ctx, op)
		return writes(op), answerOf(err, "ok")
	})
	return r, err
}

func (k *kv) Txn(ctx context.Context) clientv3.Txn { return &txn{kv: k, ctx: ctx} }

// txn collects a transaction and sends it, as one step, on Commit.
type txn struct {
	kv        *kv
	ctx       context.Context
	cmps      []clientv3.Cmp
	then, els []clientv3.Op
}

func (t *txn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	return t
}

func (t *txn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.then = append(t.then, ops...)
	return t
}

func (t *txn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.els = append(t.els, ops...)
	return t
}

func (t *txn) Commit() (r *clientv3.TxnResponse, err error) {
	w := false
	for _, op := range append(append([]clientv3.Op(nil), t.then...), t.els...) {
		w = w || writes(op)
	}
	t.kv.step(w, t.describe(), func() (bool, string) {
		r, err = t.kv.KV.Txn(t.ctx).If(t.cmps...).Then(t.then...).Else(t.els...).Commit()
		if err != nil {
			return true, "error: " + err.Error()
		}
		branch, taken := "then", t.then
		if !r.Succeeded {
			branch, taken = "else", t.els
		}
		wrote := false
		for _, op := range taken {
			wrote = wrote || writes(op)
		}
		var got []string
		for _, resp := range r.Responses {
			if rr := resp.GetResponseRange(); rr != nil {
				got = append(got, kvsOf(rr.Kvs))
			}
		}
		ans := branch
		if len(got) > 0 {
			ans += ": " + strings.Join(got, "; ")
		}
		return wrote, ans
	})
	return r, err
}

// describe renders the transaction: "if mod(b/k1)=7 then put b/k1={…}".
func (t *txn) describe() string {
	var b strings.Builder
	b.WriteString("txn")
	if len(t.cmps) > 0 {
		b.WriteString(" if ")
		for i, c := range t.cmps {
			if i > 0 {
				b.WriteString(" ∧ ")
			}
			b.WriteString(describeCmp(c))
		}
	}
	ops := func(word string, os []clientv3.Op) {
		if len(os) == 0 {
			return
		}
		b.WriteString(" " + word + " ")
		for i, op := range os {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(describeOp(op))
		}
	}
	ops("then", t.then)
	ops("else", t.els)
	return b.String()
}

func writes(op clientv3.Op) bool { return op.IsPut() || op.IsDelete() || op.IsTxn() }

func describeOp(op clientv3.Op) string {
	key := short(string(op.KeyBytes()))
	if len(op.RangeBytes()) > 0 {
		key += "*"
	}
	switch {
	case op.IsGet():
		return "get " + key
	case op.IsPut():
		return "put " + key + "=" + value(string(op.KeyBytes()), op.ValueBytes())
	case op.IsDelete():
		return "delete " + key
	}
	return "txn"
}

func describeCmp(c clientv3.Cmp) string {
	pc := (*etcdserverpb.Compare)(&c)
	var v any
	switch pc.Target {
	case etcdserverpb.Compare_MOD:
		v = pc.GetModRevision()
	case etcdserverpb.Compare_CREATE:
		v = pc.GetCreateRevision()
	case etcdserverpb.Compare_VERSION:
		v = pc.GetVersion()
	case etcdserverpb.Compare_VALUE:
		v = value(string(c.Key), pc.GetValue())
	case etcdserverpb.Compare_LEASE:
		v = pc.GetLease()
	}
	key := short(string(c.Key))
	if len(c.RangeEnd) > 0 {
		key += "*"
	}
	op := map[etcdserverpb.Compare_CompareResult]string{etcdserverpb.Compare_EQUAL: "=", etcdserverpb.Compare_GREATER: ">",
		etcdserverpb.Compare_LESS: "<", etcdserverpb.Compare_NOT_EQUAL: "≠"}[pc.Result]
	return fmt.Sprintf("%s(%s)%s%v", strings.ToLower(pc.Target.String()), key, op, v)
}

// kvsOf renders what a read found: at most four keys, then how many in all.
func kvsOf(kvs []*mvccpb.KeyValue) string {
	if len(kvs) == 0 {
		return "none"
	}
	var parts []string
	for i, kv := range kvs {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("… (%d keys)", len(kvs)))
			break
		}
		parts = append(parts, fmt.Sprintf("%s=%s@%d", short(string(kv.Key)), value(string(kv.Key), kv.Value), kv.ModRevision))
	}
	return strings.Join(parts, ", ")
}

// short drops a key's table prefix ("tollgate/tb/NAME/").
func short(key string) string {
	if rest, ok := strings.CutPrefix(key, "tollgate/"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			if j := strings.IndexByte(rest[i+1:], '/'); j >= 0 {
				return rest[i+1+j+1:]
			}
		}
	}
	return key
}

// value renders the value of key: the token bucket's 16 bytes are a bucket
// (tokens, then the timestamp in ms), its 8 bytes a floor (ms); any other
// is quoted.
func value(key string, v []byte) string {
	if !strings.HasPrefix(key, "tollgate/tb/") {
		if len(v) > 24 {
			return fmt.Sprintf("%q…(%d bytes)", v[:24], len(v))
		}
		return fmt.Sprintf("%q", v)
	}
	switch len(v) {
	case 16:
		return fmt.Sprintf("{tokens=%v last=%dms}", math.Float64frombits(binary.BigEndian.Uint64(v[:8])), int64(binary.BigEndian.Uint64(v[8:])))
	case 8:
		return fmt.Sprintf("%dms", int64(binary.BigEndian.Uint64(v)))
	}
	return fmt.Sprintf("%q", v)
}

func answerOf(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ok
}
