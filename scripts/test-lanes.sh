#!/usr/bin/env bash
# Splits the module's packages for CI's run of the README's test command
# (go test ./...) into three sets, printed one import path a line:
#
#   bash scripts/test-lanes.sh race    under -race, in the foreground
#   bash scripts/test-lanes.sh servers under -race, in a lane of their own
#   bash scripts/test-lanes.sh plain   without -race
#   bash scripts/test-lanes.sh write DIR   all three, into DIR/race ...
#
# Every package is in exactly one set (it fails otherwise), so every
# package's tests run in CI. A package runs without -race only when no
# goroutine of the module's code can run beside another in its test binary:
#
#   - neither its own files (tests included) nor those of any package of
#     the module that its test binary imports start one (a go statement,
#     time.AfterFunc, an HTTP server, a signal handler, or a child process
#     started with exec.Cmd.Start or read through a pipe, whose copying
#     goroutines run beside the caller), and its tests do not call
#     t.Parallel;
#   - it imports no package from outside the module and the standard
#     library (etcd's and gRPC's clients, go-redis, rapid... run goroutines
#     of their own that may call back into the module's code);
#
# or it is one of the packages below whose imports start goroutines on
# paths its tests do not take (argued there). The race detector reports
# only accesses that two goroutines make unordered by happens-before; in
# such a test binary every access of the module's code is on the test's
# own goroutine, ordered, so -race can report nothing there and only makes
# the run slower: generating and type-checking the mutants under it took
# tenfold the CPU, and their child builds (internal/mutants/build) were
# built and linked with it.
#
# The server set is the packages whose tests start redis-server, etcd
# members or a FUSE mount and mostly wait on them: they run under -race in
# a lane of their own, beside the foreground, where a waiting test binary
# would hold one of go test's two slots (-p 2) with the CPU idle.
set -euo pipefail
cd "$(dirname "$0")/.."

mod=github.com/tollgate/tollgate

# The packages of the module whose test binaries import a package that
# starts goroutines, but only on paths their tests do not take:
#   internal/mutants: internal/mutants/build, whose one goroutine passes
#     signals on to a child while build.Rerun runs it; its tests call only
#     build.Cached (the overlay) and run go build with exec.Cmd's
#     CombinedOutput;
#   internal/mutants/internal/generate: impl/credits and explore/rt (it
#     type-checks them and names their package; it never calls
#     credits.Owner.Run nor runs a channel of explore/rt) and
#     internal/mutants/build (its TestMain, build.Main, runs the child test
#     binary with exec.Cmd.Run: no goroutine of the module's).
exceptions="
$mod/internal/mutants
$mod/internal/mutants/internal/generate
"

# The packages whose tests start servers (redis-server, etcd members, a
# FUSE mount) and spend most of their time waiting on them.
servers="
$mod/backends/etcdcheck
$mod/backends/etcdexplore
$mod/backends/etcdserver
$mod/backends/etcdsut
$mod/backends/redischeck
$mod/backends/redisserver
$mod/backends/redissut
$mod/impl/etcd/credits
$mod/impl/etcd/tokenbucket
$mod/impl/redis/credits
$mod/impl/redis/rconn
$mod/impl/redis/tokenbucket
$mod/internal/lazyfs
"

starts='^[[:space:]]*go[[:space:]]+(func\b|\(|[A-Za-z_][A-Za-z0-9_.]*(\[[^]]*\])?\()|time\.AfterFunc|\.AfterFunc\(|http\.Serve|ListenAndServe|httptest\.NewServer|signal\.Notify|\.Start\(\)|StdoutPipe|StderrPipe'

all=$(go list ./...)
# The packages of the module whose non-test files start goroutines, and
# those whose files (tests included) start them or run tests in parallel.
code="" own=""
while read -r p d; do
  code_files=() test_files=()
  for f in "$d"/*.go; do
    case "$f" in *_test.go) test_files+=("$f") ;; *) code_files+=("$f") ;; esac
  done
  if [ ${#code_files[@]} -gt 0 ] && grep -qE "$starts" "${code_files[@]}"; then code+="$p"$'\n'; own+="$p"$'\n'
  elif [ ${#test_files[@]} -gt 0 ] && grep -qE "$starts|t\.Parallel\(\)" "${test_files[@]}"; then own+="$p"$'\n'; fi
done < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...)

# Every test binary (p.test) with every package it imports: one go list.
plain=""
while read -r bin deps; do
  p=${bin%.test}
  if grep -qxF "$p" <<<"$servers"; then continue; fi
  if grep -qxF "$p" <<<"$exceptions"; then plain+="$p"$'\n'; continue; fi
  grep -qxF "$p" <<<"$own" && continue
  ok=1
  for d in $deps; do
    case "$d" in
    "$p" | "$p"_test | \[*) ;; # [p.test]: the word after p compiled with its tests
    "$mod" | "$mod"/*) if grep -qxF "$d" <<<"$code"; then ok=0; break; fi ;;
    *)
      case "${d%%/*}" in
      *.*) ok=0; break ;; # a package from outside the module and the standard library
      esac ;;
    esac
  done
  if [ "$ok" = 1 ]; then plain+="$p"$'\n'; fi
done < <(go list -test -f '{{if eq .Name "main"}}{{.ImportPath}} {{join .Deps " "}}{{end}}' ./... | grep -E '^[^ ]+\.test( |$)')
# A package without test files has no test binary: go test only lists it.
for p in $(go list -f '{{if not (or .TestGoFiles .XTestGoFiles)}}{{.ImportPath}}{{end}}' ./...); do
  grep -qxF "$p" <<<"$servers" || plain+="$p"$'\n'
done

race=""
for p in $all; do
  grep -qxF "$p" <<<"$plain" || grep -qxF "$p" <<<"$servers" || race+="$p"$'\n'
done

# Every server package and exception is a package of the module, no server
# package is also plain, and the three sets hold every package once.
for p in $servers $exceptions; do
  grep -qxF "$p" <<<"$all" || { echo "scripts/test-lanes.sh names $p, which is not a package of the module" >&2; exit 1; }
done
n_all=$(grep -c . <<<"$all")
n_plain=$(grep -c . <<<"$plain" || true)
n_servers=$(grep -c . <<<"$servers")
n_race=$(grep -c . <<<"$race" || true)
if [ $((n_plain + n_servers + n_race)) -ne "$n_all" ] ||
  [ "$(printf '%s%s%s' "$plain" "$servers" "$race" | grep . | sort | uniq -d)" != "" ]; then
  echo "scripts/test-lanes.sh: the three sets do not hold each of the $n_all packages once" >&2; exit 1
fi

case "${1:-}" in
plain) printf '%s' "$plain" ;;
servers) printf '%s' "$servers" | grep . ;;
race) printf '%s' "$race" ;;
write)
  # write DIR: the three sets into DIR/race, DIR/servers and DIR/plain.
  printf '%s' "$race" >"$2/race"
  printf '%s' "$servers" | grep . >"$2/servers"
  printf '%s' "$plain" >"$2/plain"
  echo "test lanes: $n_race packages under -race, $n_servers that start servers under -race, $n_plain without -race" ;;
*) echo "usage: $0 race|servers|plain|write DIR" >&2; exit 2 ;;
esac
