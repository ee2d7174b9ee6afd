package etcdsut

import (
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/remote"
	etokenbucket "github.com/tollgate/tollgate/impl/etcd/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
)

// etcdTokenbucketTable is the method set of *etokenbucket.Table that
// TokenBucket uses. Every mutant of impl/etcd/tokenbucket has it too (a
// copy of the package, whose Limits and ArgError are impl/tokenbucket's).
type etcdTokenbucketTable = remote.TBTable

var _ etcdTokenbucketTable = (*etokenbucket.Table)(nil)

// TokenBucket applies model token-bucket inputs to an etcd-backed table
// (impl/etcd/tokenbucket, or a mutant of it) through remote.TokenBucket: an
// *ArgError is the Invalid field of the output; any other error is returned
// as it is, with a zero output, and wraps etokenbucket.ErrUnknown when the
// operation may have happened, ErrNotSent when it did not. It is safe for
// concurrent use.
type TokenBucket struct {
	*remote.TokenBucket
}

// NewTokenBucket returns an adapter over the table called name, on c (which
// stays the caller's), of f's package (fault.None: the real implementation;
// otherwise a fault of impl/etcd/tokenbucket, whose mutant package
// tables_gen.go builds).
func NewTokenBucket(f fault.Fault, c *clientv3.Client, name string) (*TokenBucket, error) {
	if f != fault.None && (!f.Etcd() || f.Credits()) {
		return nil, fmt.Errorf("etcdsut: %v is not a fault of the etcd token bucket", f)
	}
	t, err := newEtcdTokenbucket(f, c, name)
	if err != nil {
		return nil, err
	}
	return &TokenBucket{remote.NewTokenBucket(t)}, nil
}
