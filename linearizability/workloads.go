package linearizability

import "github.com/tollgate/tollgate/model"

// TBWorkloads are the token-bucket workloads of `tollgate check`, the tests
// and the mutant layer, in the order they run. Each is sized by its clients,
// keys and ops per client; Scale changes those.
//
//   - hot-key: every client on one key with a large bucket, so nearly every
//     take succeeds and commits race (lost updates, fail-closed refusals).
//   - contention: four clients doing nothing but take on one key of a bucket
//     that never runs dry: every refusal and every repeated remainder is a
//     bug (T2, T11).
//   - many-keys: 16 keys, small buckets, every operation kind including
//     reset and reset_all.
//   - stale-clock: a clock stepped by the callers themselves, readings up to
//     three steps old, a yield between reading and calling: takes whose
//     reading is older than a committed one (T4).
//   - idle-keys: four small buckets that refill within a few clock steps,
//     reclaimed all the time while takes with stale readings race the
//     reclaims and resets (T12).
func TBWorkloads() []TBWorkload {
	return []TBWorkload{
		{
			Name: "hot-key", Clients: 8, Keys: 1, OpsPerClient: 40,
			Limits: model.Limits{Capacity: 1000, RefillPerSecond: 100}, Costs: []float64{1, 2},
			ClockStepMs: 1, StepProb: 0.05, StaleProb: 0.2, StaleSteps: 2,
			Mix: [7]int{10, 1, 1, 0, 0, 0, 2},
		},
		{
			Name: "contention", Clients: 4, Keys: 1, OpsPerClient: 500,
			Limits: model.Limits{Capacity: 1e9, RefillPerSecond: 1}, Costs: []float64{1},
			Mix: [7]int{1, 0, 0, 0, 0, 0, 0},
		},
		{
			Name: "many-keys", Clients: 8, Keys: 16, OpsPerClient: 40,
			Limits: model.Limits{Capacity: 5, RefillPerSecond: 10}, Costs: []float64{1, 2, 0.5},
			ClockStepMs: 10, StepProb: 0.1, StaleProb: 0.1, StaleSteps: 2,
			Mix: [7]int{12, 3, 3, 1, 0, 0, 3},
		},
		{
			Name: "stale-clock", Clients: 8, Keys: 2, OpsPerClient: 40,
			Limits: model.Limits{Capacity: 10, RefillPerSecond: 20}, Costs: []float64{1, 3},
			StartMs: 1000, ClockStepMs: 50, StepProb: 0.2, StaleProb: 0.5, StaleSteps: 3,
			Mix: [7]int{8, 2, 2, 0, 0, 0, 4}, Yield: true,
		},
		{
			Name: "idle-keys", Clients: 6, Keys: 4, OpsPerClient: 40,
			Limits: model.Limits{Capacity: 3, RefillPerSecond: 40}, Costs: []float64{1, 2},
			StartMs: 1000, ClockStepMs: 50, StepProb: 0.3, StaleProb: 0.4, StaleSteps: 3,
			Mix: [7]int{8, 2, 1, 1, 0, 3, 3}, Yield: true,
		},
	}
}

// CrWorkloads are the credit-table workloads, in the order they run.
//
//   - cycling: holders reserve general slots, enqueue for two racing owners,
//     release, reuse stale tokens, try to release another holder's
//     reservation, and now and then die.
//   - exhaustion: more holders than internal slots, holding their slots for
//     a while; holders die holding slots and a sweeper frees them; holders
//     try to release each other's reservations.
//   - sweep-race: holders die while their enqueue is in flight (some answers
//     lost: unknown outcomes), two sweepers race the enqueues and the owners.
//   - reserve-storm: four holders that reserve and release at once, all
//     contending for the lowest general slot (C2, C16).
//   - dead-enqueue: two holders that die with an enqueue under way, and a
//     sweeper sweeping without pause: the sweep races each enqueue for the
//     row (C5, C10).
//   - owner-dies: as cycling, and the owner closes the table part way (C11).
func CrWorkloads() []CrWorkload {
	return []CrWorkload{
		{
			Name: "cycling", Holders: 6, Rounds: 10, Classes: []model.Class{model.General}, Hold: 2,
			Mix:    [numActs]int{ActEnqueue: 5, ActRelease: 3, ActExitHolding: 1, ActExitMidEnqueue: 1, ActStaleToken: 1},
			Owners: 2, Sweepers: 1, DoubleFinishProb: 0.2, UnknownProb: 0.3,
		},
		{
			Name: "exhaustion", Holders: 8, Rounds: 10, Classes: []model.Class{model.Internal}, Hold: 20,
			Mix:    [numActs]int{ActEnqueue: 2, ActRelease: 3, ActExitHolding: 3, ActExitMidEnqueue: 1, ActForeignRelease: 2},
			Owners: 1, Sweepers: 1, UnknownProb: 0.3,
		},
		{
			Name: "sweep-race", Holders: 6, Rounds: 10, Classes: []model.Class{model.General, model.Internal}, Hold: 1,
			Mix:    [numActs]int{ActEnqueue: 2, ActRelease: 1, ActExitMidEnqueue: 5},
			Owners: 2, Sweepers: 2, UnknownProb: 0.3,
		},
		{
			Name: "reserve-storm", Holders: 4, Rounds: 150, Classes: []model.Class{model.General},
			Mix: [numActs]int{ActRelease: 1},
		},
		{
			Name: "dead-enqueue", Holders: 2, Rounds: 150, Classes: []model.Class{model.General},
			Mix:    [numActs]int{ActEnqueue: 1, ActSweepRace: 3, ActReleaseRace: 3},
			Owners: 1,
		},
		{
			Name: "owner-dies", Holders: 6, Rounds: 10, Classes: []model.Class{model.General}, Hold: 2,
			Mix:    [numActs]int{ActEnqueue: 5, ActRelease: 2, ActExitHolding: 1, ActExitMidEnqueue: 1},
			Owners: 1, Sweepers: 1, CloseAfter: 12,
		},
	}
}
