package econn

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// TestClassify: a refusal that leaves nothing changed wraps ErrNotSent,
// whether the member decided it before proposing the request or when
// applying it, in the gRPC form and in the client's; a call that was sent
// and got no answer wraps ErrUnknown.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
	}{
		{rpctypes.ErrGRPCNoLeader, ErrNotSent},
		{rpctypes.ErrGRPCTooManyOps, ErrNotSent},
		{rpctypes.ErrGRPCLeaseTTLTooLarge, ErrNotSent},
		{rpctypes.ErrLeaseTTLTooLarge, ErrNotSent},
		{fmt.Errorf("grant: %w", rpctypes.ErrLeaseTTLTooLarge), ErrNotSent},
		{rpctypes.ErrGRPCLeaseNotFound, ErrNotSent},
		{context.DeadlineExceeded, ErrUnknown},
		{rpctypes.ErrGRPCTimeout, ErrUnknown},
		{errors.New("connection reset"), ErrUnknown},
	} {
		got := Classify(tc.err, true)
		if !errors.Is(got, tc.want) || !errors.Is(got, tc.err) {
			t.Errorf("Classify(%v) = %v, want it to wrap %v and the error itself", tc.err, got, tc.want)
		}
	}
	if Classify(nil, true) != nil {
		t.Error("Classify(nil) is not nil")
	}
	if err := Classify(context.DeadlineExceeded, false); !errors.Is(err, ErrNotSent) {
		t.Errorf("an error of a call that never left: %v", err)
	}
}
