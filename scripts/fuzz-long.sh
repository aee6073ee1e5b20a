#!/usr/bin/env bash
# Runs every fuzz target of ./payload/ (as listed by `go test -list`) for
# FUZZTIME each (default 5m), one after the other, and prints each
# target's final execution count. New crashers are written by the Go
# toolchain under payload/testdata/fuzz/<Target>/ and make this script fail.
#   FUZZTIME=30m scripts/fuzz-long.sh
#   scripts/fuzz-long.sh FuzzUnserialize FuzzParse   # only these
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
FUZZTIME=${FUZZTIME:-5m}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(go test -list 'Fuzz.*' ./payload/ | grep '^Fuzz')
fi
summary=()
for target in "${targets[@]}"; do
  echo "== $target for $FUZZTIME"
  log=$(mktemp)
  if ! go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" ./payload/ 2>&1 | tee "$log"; then
    echo "== $target FAILED (see the crasher under payload/testdata/fuzz/$target/)"
    rm -f "$log"
    exit 1
  fi
  last=$(grep -E 'execs: [0-9]+' "$log" | tail -1 | sed -E 's/.*elapsed: ([^,]+), execs: ([0-9]+).*/\2 execs in \1/')
  summary+=("$target: ${last:-?}")
  rm -f "$log"
done
echo "== fuzz summary (FUZZTIME=$FUZZTIME)"
printf '%s\n' "${summary[@]}"
