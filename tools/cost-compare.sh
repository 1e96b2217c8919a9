#!/usr/bin/env bash
# Software cost per commit, two checkouts side by side (issue 22's latency-0 target): runs
#   scythe bench --profile zero --theta 0.5 --protocols scythe,ford-occ --clients 8   (one loop)
# ROUNDS times (default 3) with checkout A's ./scythe, then B's, alternately, and prints per checkout and protocol the
# median and range of loop_alloc_bytes_per_txn, loop_cpu_us_per_txn and cpu_us_per_txn from results.json, and B/A.
# Allocation per commit is the steadier figure; CPU per commit follows the machine's load, so read ratios of runs
# taken side by side, never one run against a number from another day. COST_BENCH_ARGS is appended to every run.
#   tools/cost-compare.sh /tmp/main-checkout . 5
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 CHECKOUT_A CHECKOUT_B [ROUNDS]" >&2; exit 2; }
a="$(cd "$1" && pwd)"; b="$(cd "$2" && pwd)"; rounds="${3:-3}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for i in $(seq 1 "$rounds"); do
  for side in A B; do
    dir="$a"; [ "$side" = B ] && dir="$b"
    # shellcheck disable=SC2086
    (cd "$dir" && ./scythe bench --profile zero --theta 0.5 --protocols scythe,ford-occ --clients 8 --quiet \
      ${COST_BENCH_ARGS:-} --out "$out/$side-$i" >/dev/null)
  done
done
python3 - "$out" "$a" "$b" <<'PY'
import glob, json, statistics, sys
out, names = sys.argv[1], {"A": sys.argv[2], "B": sys.argv[3]}
runs = {}
for f in sorted(glob.glob(out + "/*/results.json")):
    side = f[len(out) + 1:].split("-")[0]
    for run in json.load(open(f))["runs"]:
        runs.setdefault((run["protocol"], side), []).append(run)
fields = ("loop_alloc_bytes_per_txn", "loop_cpu_us_per_txn", "cpu_us_per_txn")
med = {}
for side in ("A", "B"):
    print(side, names[side])
for (protocol, side), rs in sorted(runs.items()):
    cells = []
    for field in fields:
        values = [r[field] for r in rs if r.get(field) is not None]
        med[(protocol, side, field)] = statistics.median(values) if values else None
        cells.append("%s %s (%s..%s)" % (field, round(med[(protocol, side, field)], 1) if values else "-",
                                         min(values) if values else "-", max(values) if values else "-"))
    print("%-9s %s runs %d  %s  txn/s median %.0f" % (protocol, side, len(rs), "  ".join(cells),
          statistics.median(r["committed_per_s"] for r in rs)))
for protocol in sorted({p for p, _ in runs}):
    ratios = []
    for field in fields:
        x, y = med.get((protocol, "A", field)), med.get((protocol, "B", field))
        ratios.append("%s %.3f" % (field, y / x) if x and y else field + " -")
    print("%-9s B/A  %s" % (protocol, "  ".join(ratios)))
PY
