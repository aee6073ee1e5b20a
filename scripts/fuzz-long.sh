#!/usr/bin/env bash
# Runs every fuzz target of every package that has some (as listed by
# `go test -list`) for FUZZTIME each (default 5m), one after the other, and
# prints each target's final execution count. New crashers are written by
# the Go toolchain under <package>/testdata/fuzz/<Target>/ and make this
# script fail.
#   FUZZTIME=30m scripts/fuzz-long.sh
#   scripts/fuzz-long.sh FuzzUnserialize FuzzPayload   # only these
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
FUZZTIME=${FUZZTIME:-5m}

# Each entry is "package target".
wanted=" $* "
runs=()
for dir in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do
  for target in $(go test -list 'Fuzz.*' "$dir/" | grep '^Fuzz'); do
    if [ $# -eq 0 ] || [[ "$wanted" == *" $target "* ]]; then
      runs+=("$dir $target")
    fi
  done
done
if [ ${#runs[@]} -eq 0 ]; then
  echo "no fuzz target matches: $*" >&2
  exit 1
fi
summary=()
for run in "${runs[@]}"; do
  dir=${run% *}
  target=${run#* }
  echo "== $target ($dir) for $FUZZTIME"
  log=$(mktemp)
  if ! go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" "$dir/" 2>&1 | tee "$log"; then
    echo "== $target FAILED (see the crasher under $dir/testdata/fuzz/$target/)"
    rm -f "$log"
    exit 1
  fi
  last=$(grep -E 'execs: [0-9]+' "$log" | tail -1 | sed -E 's/.*elapsed: ([^,]+), execs: ([0-9]+).*/\2 execs in \1/')
  summary+=("$target (${dir#./}): ${last:-?}")
  rm -f "$log"
done
echo "== fuzz summary (FUZZTIME=$FUZZTIME)"
printf '%s\n' "${summary[@]}"
