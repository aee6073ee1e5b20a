#!/usr/bin/env bash
# A short fuzz of every fuzz target, one after the other: FUZZTIME each
# (default 15s). scripts/test runs it; scripts/fuzz-long.sh is the long run.
#   FUZZTIME=1m scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
FUZZTIME=${FUZZTIME:-15s}

# fuzz_one runs one target. Go 1.26's fuzz coordinator can end a run that
# found nothing with a bare "context deadline exceeded" as -fuzztime
# expires on a busy machine (golang/go#75804, fixed in Go 1.27): such a
# run, with no failing input written and no panic, is run once more; a
# failing input, a panic or a second failure fails the suite.
fuzz_one() {
  local dir=$1 target=$2 out
  for try in 1 2; do
    if out=$(go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" "$dir/" 2>&1); then
      printf '%s\n' "$out" | tail -n 3
      return 0
    fi
    printf '%s\n' "$out"
    if [ "$try" = 2 ] || ! grep -q 'context deadline exceeded' <<<"$out" ||
      grep -q -e 'Failing input written' -e 'panic:' <<<"$out"; then
      return 1
    fi
    echo "-- $target: the fuzz coordinator's deadline race (golang/go#75804), no failing input; once more"
  done
}
# Every package with a Fuzz* function in its tests; -fuzz takes one target
# of one package at a time.
for dir in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/func //'); do
    echo "-- $target ($dir)"
    fuzz_one "$dir" "$target"
  done
done
