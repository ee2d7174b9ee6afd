package redischeck

import (
	"fmt"
	"time"
)

// The cluster-partition scenarios: on a Redis Cluster whose nodes reach
// each other only through proxies (redisserver.ClusterThroughProxies), the
// primary serving the table's slot is cut from every other node at 30% of
// the calls, on the cluster bus and for replication, while the clients
// still reach every node: clients on both sides.
//
//   - cluster-partition-short: the cut heals after ClusterShortCut, on a
//     cluster of node timeout ClusterShortNodeTimeout, before any node may
//     mark the primary failed: nothing changes hands, the cut primary kept
//     every write. Linearizable, nothing lost, and the table answers again.
//   - cluster-partition: the cut holds until the others have promoted the
//     primary's replica and ClusterPartitionBound has passed, then heals:
//     the old primary rejoins as a replica of the new one and drops what
//     it acknowledged after the cut. What Redis Cluster promises: a
//     primary that cannot reach a majority of primaries for the node
//     timeout stops taking writes (CLUSTERDOWN, a refusal that ran
//     nothing), so only writes acknowledged within
//     ClusterPartitionBound of the cut may be lost. The row holds it to
//     that bound as partition-failover-minreplicas is held to its own
//     (partitionBound): the cut primary ran no write function after it
//     (its own count, read at the bound and at the end), it refused a
//     write while cut off, and no lost take on a key of its own was
//     acknowledged after it; and, lossy as the row is, no write applied
//     twice and a linearizable history up to the cut.
func clusterPartitionScenarios() []Scenario {
	return []Scenario{
		{Name: "cluster-partition-short", What: fmt.Sprintf("on a Redis Cluster behind proxies (node timeout %v): the table's primary cut from every other node (bus and replication) at 30%% of the calls for %v, clients reaching every node; healed before any failover", ClusterShortNodeTimeout, ClusterShortCut),
			Cluster: true, ClusterProxied: true, nodeTimeout: ClusterShortNodeTimeout, endShare: 0.8, inject: clusterPartitionShort},
		{Name: "cluster-partition", What: fmt.Sprintf("on a Redis Cluster behind proxies: the table's primary cut from every other node at 30%% of the calls, clients reaching every node, until its replica is promoted and %v has passed, then healed: what the cut primary acknowledged is lost, none later than %v after the cut (it refuses with CLUSTERDOWN)", ClusterPartitionHold, ClusterPartitionBound),
			Cluster: true, ClusterProxied: true, failsOver: true, Lossy: true, cutOff: true, endShare: 0.8, hold: ClusterPartitionHold, inject: clusterPartition},
	}
}

const (
	// ClusterPartitionBound is how long after a cut a primary cut from
	// the majority of primaries may still acknowledge a write: it marks
	// the others failing once they have not answered its pings for the
	// node timeout, checks its state every 100 ms, and a loaded machine
	// adds to both.
	ClusterPartitionBound = 2*ClusterNodeTimeout + time.Second
	// ClusterPartitionHold is how long cluster-partition keeps the cut at
	// least: past the bound, so the refusal lands inside it.
	ClusterPartitionHold = ClusterPartitionBound + time.Second
	// ClusterShortCut is how long cluster-partition-short cuts the
	// table's primary off, and ClusterShortNodeTimeout its cluster's node
	// timeout: twenty times the cut. Its cut once lasted a quarter of
	// ClusterNodeTimeout, and under CI's load (a -race run beside it,
	// the node's bus through this process's proxies) a node went
	// unanswered for the rest: 3 runs in 40 beside such a load failed a
	// pair over, before the fault or during it.
	ClusterShortCut         = 250 * time.Millisecond
	ClusterShortNodeTimeout = 5 * time.Second
)

func clusterPartitionShort(e *env) error {
	p := e.cluster.Primaries[e.owner]
	if !e.Strike(0.3) {
		return nil
	}
	if err := e.cluster.Isolate(p); err != nil {
		return err
	}
	healed := false
	defer func() {
		if !healed {
			_ = e.cluster.Heal() // an error path: the cluster must not stay cut
		}
	}()
	hold := ClusterShortCut
	e.Throttle(hold / time.Duration(partitionShare*float64(e.Total)))
	time.Sleep(hold)
	e.Throttle(0)
	healed = true
	if err := e.cluster.Heal(); err != nil {
		return err
	}
	viewer := e.cluster.Primaries[(e.owner+1)%len(e.cluster.Primaries)]
	owner, _, err := viewer.SlotOwner(e.slot)
	if err != nil {
		return err
	}
	if owner != p.Addr {
		nodes, _ := viewer.Query("CLUSTER", "NODES")
		return fmt.Errorf("the slot moved to %s (%s) during a cut shorter than the node timeout; %s sees:\n%s", owner, e.cluster.Describe(owner), viewer.Addr, nodes)
	}
	e.Note = fmt.Sprintf("cut for %v; healed, the slot still the cut primary's", hold)
	return nil
}

func clusterPartition(e *env) error {
	e.Track() // from the start: a take lost at the cut returned before it
	p, r := e.cluster.Primaries[e.owner], e.cluster.Replicas[e.owner]
	e.cut.bound = ClusterPartitionBound
	if e.bound != 0 {
		e.cut.bound = e.bound
	}
	probeKey := fmt.Sprintf("{%s}-partition-probe", e.target.lastTable())
	if !e.Strike(0.3) {
		return nil
	}
	if err := e.cluster.Isolate(p); err != nil {
		return err
	}
	e.cut.at = time.Now()
	healed := false
	defer func() {
		if !healed {
			// An error path (the replica not promoted, say): the cluster
			// must not stay cut, or every later call waits out its
			// retries on a cluster that cannot serve the slot.
			e.Throttle(0)
			_ = e.cluster.Heal()
		}
	}()
	before, err := fcalls(p)
	if err != nil {
		return err
	}
	e.Throttle(e.cut.hold / time.Duration(partitionShare*float64(e.Total)))
	refused := firstRefusal(p, probeKey, "CLUSTERDOWN", e.cut.at, e.cut.at.Add(e.cut.hold))
	time.Sleep(time.Until(e.cut.at.Add(e.cut.bound)))
	atBound, err := fcalls(p)
	if err != nil {
		return err
	}
	e.cut.readAt = time.Since(e.cut.at)
	if err := e.cluster.WaitPrimary(r, 10*e.cluster.NodeTimeout); err != nil {
		return fmt.Errorf("the cut primary's replica was not promoted (%s): %w", e.cluster.LinkCounts(), err)
	}
	promoted := time.Since(e.cut.at)
	time.Sleep(time.Until(e.cut.at.Add(e.cut.hold)))
	e.Throttle(0)
	after, err := fcalls(p)
	if err != nil {
		return err
	}
	e.cut.refused = refused()
	e.cut.ran, e.cut.rejected = after.calls-before.calls, after.rejected-before.rejected
	e.cut.late = after.calls - atBound.calls
	e.cut.measured = true
	healed = true
	if err := e.cluster.Heal(); err != nil {
		return err
	}
	e.Note = fmt.Sprintf("the cut primary ran %d write calls after the cut (%d later than %v after it, its count read at the bound %v); it refused writes (CLUSTERDOWN) from %v after the cut; its replica was a primary of a whole cluster %v after the cut; %s",
		e.cut.ran, e.cut.late, e.cut.readAt.Round(time.Millisecond), e.cut.bound, e.cut.refused.Round(time.Millisecond), promoted.Round(time.Millisecond), e.cluster.LinkCounts())
	// The old primary learns on healing that it lost its slots, and
	// rejoins as a replica of the new primary.
	return e.cluster.WaitReplicaOf(p, r, 30*time.Second)
}
