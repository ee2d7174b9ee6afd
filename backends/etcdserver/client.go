package etcdserver

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// newClient is a client of endpoints that logs nothing.
func newClient(endpoints []string, timeout time.Duration) (*clientv3.Client, error) {
	cl, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: timeout, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcdserver: a client of %v: %w", endpoints, err)
	}
	return cl, nil
}

// status asks the member at endpoint alone for its status.
func status(endpoint string, timeout time.Duration) (*clientv3.StatusResponse, error) {
	cl, err := newClient([]string{endpoint}, timeout)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return cl.Status(ctx, endpoint)
}

// Status asks member i alone for its status (its id, the leader it
// follows, its raft term and index), waiting at most a second.
func (c *Cluster) Status(i int) (*clientv3.StatusResponse, error) {
	m, err := c.member(i)
	if err != nil {
		return nil, err
	}
	if c.running(m) == nil {
		return nil, ErrNotRunning
	}
	st, err := status(m.clientURL, time.Second)
	if err != nil {
		return nil, fmt.Errorf("etcdserver: status of member %d: %w", i, err)
	}
	return st, nil
}

// memberList asks endpoints for the cluster's members.
func memberList(endpoints []string) (*clientv3.MemberListResponse, error) {
	cl, err := newClient(endpoints, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := cl.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("etcdserver: member list: %w", err)
	}
	return r, nil
}
