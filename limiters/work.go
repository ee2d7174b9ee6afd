package limiters

import (
	"fmt"

	"github.com/tollgate/tollgate/internal/shard"
)

// Unit is the name of one unit of a campaign's work, a workload run on one
// version of a library: MODULE@VERSION:WORKLOAD, an -expect key without its
// property. A campaign's -shard splits the campaign by this name, so every
// unit runs in exactly one of the shards 1/n … n/n.
func Unit(module, version, workload string) string {
	return module + "@" + version + ":" + workload
}

// Select returns the workloads of ws that a run of module at version does,
// in their order: the one named only ("" for every one) and, of those, the
// ones whose Unit is in sh. The error says that only names no workload of
// ws; a shard may keep none of them, which is no error.
func Select(module, version string, ws []Workload, only string, sh shard.Shard) ([]Workload, error) {
	var out []Workload
	found := false
	for _, w := range ws {
		if only != "" && w.Name != only {
			continue
		}
		found = true
		if sh.Has(Unit(module, version, w.Name)) {
			out = append(out, w)
		}
	}
	if !found {
		return nil, fmt.Errorf("limiters: workload %q: no such workload for %s", only, module)
	}
	return out, nil
}
