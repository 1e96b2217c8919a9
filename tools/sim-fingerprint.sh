#!/usr/bin/env bash
# Prints one line per simulated run: workload, protocol, seed, then the run's history_hash, committed, aborted and
# latency percentiles. Deterministic: the same code gives the same lines, so a refactor that must not change what
# the protocols do is checked by diffing this script's output before and after (`tools/sim-fingerprint.sh > a`).
# SIM_FINGERPRINT_ARGS is appended to every run (e.g. "--profile cx5-pcie" to fingerprint another NIC model);
# SIM_FINGERPRINT_PROTOCOLS replaces the protocols fingerprinted (e.g. "selcc-2pl selcc-to sel-occ" for a refactor of
# another family; " " fingerprints none of them); SIM_FINGERPRINT_SELCC_PROTOCOLS replaces the SELCC rows' protocols ("" skips
# those rows); SIM_FINGERPRINT_JAR runs that jar instead of ./scythe (which rebuilds with ~/.m2 when a source is
# newer than its jar: a worktree built offline against its own Maven repository passes cli/target/scythe.jar).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
run() { # workload-args...
  local label="$*"
  if [ -n "${SIM_FINGERPRINT_JAR:-}" ]; then set -- java -jar "$SIM_FINGERPRINT_JAR" sim "$@"; else set -- "$root/scythe" sim "$@"; fi
  # shellcheck disable=SC2086
  "$@" ${SIM_FINGERPRINT_ARGS:-} --out "$out/r" >/dev/null 2>&1 || true
  python3 - "$out/r/results.json" "$label" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for run in r["runs"]:
    s = run["sim"]; l = run["latency_us"]
    print(sys.argv[2].split("--out")[0].strip(), "|", run["protocol"], "hash", s["history_hash"], "committed",
          run["committed"], "aborted", run["aborted"], "p50", l["p50"], "p99", l["p99"], "events", s["events"])
PY
}
for seed in 1 2; do
  for p in ${SIM_FINGERPRINT_PROTOCOLS:-scythe scythe-occ ford-occ farm-occ}; do
    run --workload smallbank --accounts 1000 --protocols "$p" --cns 2 --loops 2 --clients 8 --duration 300us --jitter 1us --seed "$seed"
    run --workload ycsb --records 10000 --protocols "$p" --cns 2 --loops 2 --clients 8 --duration 300us --seed "$seed"
    run --workload tpcc --warehouses 1 --customers 30 --items 100 --protocols "$p" --cns 1 --loops 2 --clients 8 --duration 500us --seed "$seed"
  done
done
# SELCC (issue 21): the GCL protocols through smallbank, and transactions through the B-link tree (152-byte lines, TO's timestamps fit)
# (--blink-txn: leaves latched through the cache, evictions, handovers; selcc-occ and selcc-to retry refused attempts).
for seed in 1; do
  for p in ${SIM_FINGERPRINT_SELCC_PROTOCOLS-selcc-2pl selcc-occ selcc-to sel-2pl}; do
    run --workload smallbank --accounts 1000 --protocols "$p" --cns 2 --loops 2 --clients 8 --duration 300us --jitter 1us --seed "$seed"
    run --workload blink --blink-txn 4 --records 100 --line-bytes 152 --protocols "$p" --cns 3 --loops 2 --clients 3 --duration 300us --seed "$seed"
  done
done
