package auto

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/mutants/internal/generate"
	"github.com/tollgate/tollgate/internal/mutants/patch"
)

// PatchVerdict is what the oracle made of a hand-written mutant judged from
// its patch alone (JudgePatch).
type PatchVerdict struct {
	Patch string   // the patch file
	Files []string // the files it changes, slash paths from the root
	// CaughtBy is the layers its header's Caught-by line names (nil when it
	// has none, as a draft may not).
	CaughtBy []string
	// Layers is every layer's verdict, in the order they ran.
	Layers []LayerVerdict
	Build  time.Duration
}

// Killed reports whether some layer killed the mutant.
func (v *PatchVerdict) Killed() bool {
	return slices.ContainsFunc(v.Layers, func(l LayerVerdict) bool { return l.Killed })
}

// HeaderLayer is the layer of a patch header's Caught-by line that each
// oracle layer stands for (the fast form of that check); the unit layers
// stand for none.
var HeaderLayer = map[string]string{
	"differential":    "rapid",
	"fuzz-seeds":      "fuzz",
	"linearizability": "porcupine",
	"vectors":         "conform",
	"explore":         "explore",
}

// JudgePatch judges the hand-written mutant in the unified diff at
// patchPath (paths a/… and b/… from the module root, as
// internal/mutants/patches holds them) without generating anything and
// without changing a file of the tree: the patched files, and the
// explorer's copies of any table file among them, are handed to the go
// command as an -overlay, so every layer of the oracle (Layers, or
// cfg.Layers) checks the patched code as the real table (fault.None). A
// reviewer's draft runs as it is, before go generate turns it into a
// package of the matrix.
//
// The layers are first built and run without the overlay: that baseline
// must pass, and its times set each layer's time-out, as in a campaign.
// Then every layer runs on the patched build, not only up to the first
// that fails, so the verdict names every layer that sees the bug. The
// error is a patch that does not parse or apply, or a suite that could not
// build or fails unpatched; a mutant no layer kills is a verdict, not an
// error.
func JudgePatch(cfg Config, patchPath string) (*PatchVerdict, error) {
	logf := cfg.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	data, err := os.ReadFile(patchPath)
	if err != nil {
		return nil, err
	}
	p, err := patch.Parse(filepath.Base(patchPath), data)
	if err != nil {
		return nil, err
	}
	v := &PatchVerdict{Patch: patchPath}
	if h, err := generate.ParseHeader(filepath.Base(patchPath), p.Comment); err == nil {
		v.CaughtBy = h.CaughtBy
	}
	work, err := os.MkdirTemp("", "tollgate-patch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	replace := map[string]string{}
	units := map[string]bool{}
	for _, f := range p.Files {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, fmt.Errorf("%s: %s is not a path inside the module", patchPath, f.Path)
		}
		src, err := os.ReadFile(filepath.Join(cfg.Root, filepath.FromSlash(f.Path)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", patchPath, err)
		}
		out, err := f.Apply(filepath.Base(patchPath), src)
		if err != nil {
			return nil, err
		}
		v.Files = append(v.Files, f.Path)
		units[pathDir(f.Path)] = true
		if err := writeReplace(replace, cfg.Root, work, f.Path, out); err != nil {
			return nil, err
		}
		if ex, ok, err := generate.ExploredCopy(cfg.Root, f.Path, out); err != nil {
			return nil, fmt.Errorf("the explorer's copy of %s: %w", f.Path, err)
		} else if ok {
			if err := writeReplace(replace, cfg.Root, work, ex.Path, ex.Data); err != nil {
				return nil, err
			}
		}
	}
	overlay := filepath.Join(work, "overlay.json")
	if err := writeOverlay(overlay, replace); err != nil {
		return nil, err
	}
	var dirs []string
	for d := range units {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	t0 := time.Now()
	baseDir, patchedDir := filepath.Join(work, "base"), filepath.Join(work, "patched")
	for _, d := range []string{baseDir, patchedDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	base, err := buildLayers(cfg, dirs, baseDir, "", logf)
	if err != nil {
		return nil, err
	}
	patched, err := buildLayers(cfg, dirs, patchedDir, overlay, logf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", patchPath, err)
	}
	v.Build = time.Since(t0)
	for i := range base {
		ok, out, d, timedOut := runLayer(base[i], 0, 10*time.Minute)
		if !ok || timedOut {
			return nil, fmt.Errorf("the %s layer (%s) fails without the patch: the suite is broken\n%s", base[i].layer.Name, base[i].pkg, tail(out, 40))
		}
		patched[i].timeout = max(cmp.Or(cfg.MinTimeout, 3*time.Second), 10*d)
		logf("baseline %-16s %-20s %v", base[i].layer.Name, base[i].pkg, d.Round(time.Millisecond))
	}
	for _, l := range patched {
		lv := judgeLayer(l, 0, v.Files)
		if l.layer.Pkg == "" {
			lv.Layer += " (" + strings.TrimPrefix(l.pkg, "./") + ")"
		}
		v.Layers = append(v.Layers, lv)
	}
	return v, nil
}

// Report is the verdict for a reader: each layer's outcome, then how it
// compares with the header's Caught-by line.
func (v *PatchVerdict) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s), judged through an -overlay (built in %v):\n", v.Patch, strings.Join(v.Files, ", "), v.Build.Round(time.Second))
	seen := map[string]bool{}
	for _, l := range v.Layers {
		fmt.Fprintf(&b, "  %-8s %-28s %6.1fs  %s\n", verb(l), l.Layer, l.Time.Seconds(), cmp.Or(l.Test, l.Note))
		if l.Killed {
			seen[HeaderLayer[l.Layer]] = true
		}
	}
	if v.CaughtBy != nil {
		var missed []string
		for _, c := range v.CaughtBy {
			if !seen[c] {
				missed = append(missed, c)
			}
		}
		if len(missed) > 0 {
			fmt.Fprintf(&b, "Caught-by names %s, whose fast form here did not kill it: the matrix runs each layer in full (go generate ./internal/mutants, then tollgate mutants)\n", strings.Join(missed, ", "))
		}
	}
	if v.Killed() {
		b.WriteString("killed\n")
	} else {
		b.WriteString("SURVIVED: no layer of the oracle sees this bug\n")
	}
	return b.String()
}

func verb(l LayerVerdict) string {
	if l.Killed {
		return "killed"
	}
	return "passed"
}

func pathDir(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[:i]
	}
	return "."
}
