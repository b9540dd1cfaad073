#!/usr/bin/env bash
# fuzz-ci.sh — run every cargo-fuzz target for a fixed number of inputs (issue 19: "cargo fuzz
# runs each target for a fixed number of runs in CI").
#
# Installs what it needs first: cargo-fuzz from crates.io (once), and a nightly toolchain through
# rustup when none is there. If rustup cannot get one (no network to the toolchain server), the
# stable toolchain builds the targets with RUSTC_BOOTSTRAP=1, which unlocks the same -Z flags
# (AddressSanitizer's runtime ships with stable too). A fixed seed makes each run repeatable.
#
#   scripts/fuzz-ci.sh              every target, RUNS inputs each (default 20000)
#   scripts/fuzz-ci.sh --runs N     N inputs per target
#   FUZZ_TARGETS="read_capture" scripts/fuzz-ci.sh
#
# A crash fails the script and leaves the input in fuzz/artifacts/TARGET/ (see fuzz/README.md).
set -euo pipefail

RUNS=20000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz-ci.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/fuzz"

say() { printf '[fuzz-ci] %s\n' "$*"; }

if ! cargo fuzz --version >/dev/null 2>&1; then
  say "installing cargo-fuzz from crates.io"
  cargo install --quiet --locked cargo-fuzz
fi

TOOLCHAIN=()
if rustup run nightly rustc --version >/dev/null 2>&1 \
  || rustup toolchain install nightly --profile minimal >/dev/null 2>&1; then
  TOOLCHAIN=(+nightly)
  say "toolchain: $(rustup run nightly rustc --version)"
else
  export RUSTC_BOOTSTRAP=1
  say "toolchain: $(rustc --version) with RUSTC_BOOTSTRAP=1 (no nightly could be installed)"
fi

mapfile -t TARGETS < <(if [[ -n ${FUZZ_TARGETS:-} ]]; then tr ' ' '\n' <<<"$FUZZ_TARGETS"; else cargo "${TOOLCHAIN[@]}" fuzz list; fi)
for target in "${TARGETS[@]}"; do
  [[ -n $target ]] || continue
  # A scratch corpus per run: the committed seeds are read, never written.
  work="$(mktemp -d)"
  trap 'rm -rf "$work" "$work.log"' EXIT
  say "$target: $RUNS inputs from corpus/seed"
  status=0
  cargo "${TOOLCHAIN[@]}" fuzz run "$target" "$work" corpus/seed -- \
    -runs="$RUNS" -seed=1 -max_len=16384 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    >"$work.log" 2>&1 || status=$?
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$work.log" | sed "s/^/[fuzz-ci] $target: /" || true
  if [[ $status -ne 0 ]]; then
    tail -n 60 "$work.log"
    say "$target: FAILED (exit $status); the input is in fuzz/artifacts/$target/"
    exit 1
  fi
  rm -rf "$work" "$work.log"
  trap - EXIT
  say "$target: $RUNS inputs, no crash"
done
