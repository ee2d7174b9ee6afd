// Package econn is what the etcd-backed tables of impl/etcd/tokenbucket and
// impl/etcd/credits share: the client they build from the caller's
// clientv3.Config, the one rule for what a failed call means, and the rule
// for table names.
//
// # What a failed call means
//
// Every transition of an etcd table is one transaction (Txn) whose
// compares decide whether its writes apply. A call fails in one of three
// ways, and the tables report each differently:
//
//   - The Txn was answered. Succeeded false is a definite answer, not a
//     failure: nothing was written, and the table reads again and decides
//     anew (a lost race, never a refusal).
//   - The call was never sent: the context had ended, or the client was
//     closed, before the request left. Nothing ran. Such an error wraps
//     ErrNotSent.
//   - Anything else: the request may have reached the leader and been
//     proposed, and etcd may commit a proposal after its client stopped
//     waiting (a timeout, a leader change, a lost connection, "request
//     timed out"). Such an error wraps ErrUnknown, and a caller must not
//     treat it as a refusal. The exceptions are the server refusals that
//     etcd decides before it proposes anything (too many operations, a
//     request too large, no space, too many requests), and "no leader":
//     every call is sent with clientv3.WithRequireLeader, so a member that
//     knows of no leader (one cut off from the others) refuses it in its
//     gRPC interceptor, before the request reaches the server, instead of
//     holding it until a leader appears. They are returned wrapped in
//     ErrNotSent.
//
// The tables resend nothing after an error. clientv3's retry interceptor
// resends a mutation on its own in two cases: when no connection was
// available to send it on (its "safe retry" rule for non-repeatable calls,
// harmless: it was not sent), and, for any call, when the answer carries
// the gRPC code DeadlineExceeded or Canceled while the caller's context is
// still live. A member that answered a committed write with one of those
// codes would see it twice; etcd's members answer a proposal that timed
// out with Unavailable ("request timed out"), which is not resent, so the
// tables do not take that path (spec/etcd.md §1).
package econn

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The errors a failed call wraps (see the package doc).
var (
	// ErrUnknown: the call was sent and its outcome cannot be known; it may
	// have committed.
	ErrUnknown = errors.New("etcd: outcome unknown: the call was sent and no answer came, so it may have committed")
	// ErrNotSent: the call never reached a member, or a member refused it
	// before proposing it, or every member refused it when applying it;
	// nothing changed.
	ErrNotSent = errors.New("etcd: the call was not sent, or refused before it ran")
)

// NewClient returns an etcd client for cfg (endpoints, TLS, credentials and
// time-outs, unchanged) with a silent logger when cfg sets none: a table's
// errors are its answers, and the client's own retries and reconnections
// are not the caller's log lines. cfg is not modified.
func NewClient(cfg clientv3.Config) (*clientv3.Client, error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	return c, nil
}

// beforeProposal are the server refusals etcd decides before it proposes
// a request to raft: a request refused with one of them never ran.
var beforeProposal = []error{
	rpctypes.ErrGRPCTooManyOps, rpctypes.ErrGRPCRequestTooLarge, rpctypes.ErrGRPCNoSpace,
	rpctypes.ErrGRPCRequestTooManyRequests, rpctypes.ErrGRPCDuplicateKey,
	rpctypes.ErrGRPCNoLeader,
}

// refusedWhenApplied are the refusals etcd decides when it applies a
// committed request: every member refuses it alike and nothing changes (a
// lease granted with a TTL above etcd's maximum; a Txn, a Put or a
// keep-alive naming a lease that does not exist fails whole). The request
// ran, but its outcome is known: it did nothing.
var refusedWhenApplied = []error{rpctypes.ErrGRPCLeaseTTLTooLarge, rpctypes.ErrGRPCLeaseNotFound}

// Classify returns err, wrapped in ErrNotSent or ErrUnknown as the package
// doc says; sentMaybe is false when the caller knows the request never
// left. nil stays nil.
func Classify(err error, sentMaybe bool) error {
	if err == nil {
		return nil
	}
	if !sentMaybe || errors.Is(err, clientv3.ErrNoAvailableEndpoints) {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	desc := rpctypes.ErrorDesc(err)
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		desc = ee.Error() // the client's form, wrapped by a caller
	}
	for _, r := range append(beforeProposal[:len(beforeProposal):len(beforeProposal)], refusedWhenApplied...) {
		if desc == rpctypes.ErrorDesc(r) {
			return fmt.Errorf("%w: %w", ErrNotSent, err)
		}
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.Canceled && strings.Contains(s.Message(), "client connection is closing") {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	return fmt.Errorf("%w: %w", ErrUnknown, err)
}

// Do runs one call of a table against the cluster: it refuses to send
// when ctx has already ended (ErrNotSent, nothing sent), sends it with
// clientv3.WithRequireLeader, and classifies its error.
func Do[T any](ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, Classify(err, false)
	}
	v, err := call(clientv3.WithRequireLeader(ctx))
	return v, Classify(err, true)
}

// Read runs one call that only reads: whatever became of it, nothing was
// written, so its error always wraps ErrNotSent.
func Read[T any](ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, Classify(err, false)
	}
	v, err := call(clientv3.WithRequireLeader(ctx))
	if err != nil {
		err = fmt.Errorf("%w (the call only reads): %w", ErrNotSent, err)
	}
	return v, err
}

// NameRule is the rule a table name must meet: 1 to 256 bytes, without
// "/", so that no table's key prefix is another's.
const NameRule = "must be 1 to 256 bytes without \"/\""

// CheckName reports whether name meets NameRule.
func CheckName(name string) bool {
	return len(name) >= 1 && len(name) <= 256 && !strings.Contains(name, "/")
}
