#!/bin/bash
# Hazelcast's join cost by partition count (issue 23, suitetime4): six members in their own JVMs with the shipped
# cluster.xml (from the CLI jar), a founder then five at once, as LocalCluster boots a cluster; prints each member's
# join and cluster-safe times and the members' CPU when all are safe.
# Usage: tools/hz-join-cpu/run.sh PARTITIONS [JAR]   (JAR: cli/target/scythe.jar after an install)
set -euo pipefail
pc=$1; jar=${2:-cli/target/scythe.jar}
work=$(mktemp -d); trap 'touch "$work/stop"; wait; rm -rf "$work"' EXIT
javac -cp "$jar" -d "$work" "$(dirname "$0")/Member.java"
cp="$jar:$work"; base=$((27000 + RANDOM % 500 * 2))
opts="-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dhazelcast.partition.count=$pc -Dhazelcast.logging.type=none"
t0=$(date +%s.%N)
nice java $opts -cp "$cp" Member $base 1 "$pc" $base "$work/stop" > "$work/out-0.txt" 2>&1 &
until grep -q cpuMs "$work/out-0.txt"; do sleep 0.2; done
for i in 1 2 3 4 5; do
  nice java $opts -cp "$cp" Member $((base + i)) 6 "$pc" $base "$work/stop" > "$work/out-$i.txt" 2>&1 &
done
until [ "$(cat "$work"/out-[1-5].txt | grep -c cpuMs)" -ge 5 ]; do sleep 0.2; done
t1=$(date +%s.%N)
ticks=0
for p in $(jobs -p); do ticks=$((ticks + $(awk '{print $14 + $15}' /proc/$p/stat))); done
echo "partitions $pc: all safe after $(echo "$t1 - $t0" | bc) s; the members' CPU then $((ticks * 1000 / $(getconf CLK_TCK))) ms; $(uptime | sed 's/.*load/load/')"
grep -h cpuMs "$work"/out-*.txt
