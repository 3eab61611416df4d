#!/bin/sh
# Times two builds of the bench against each other: ROUNDS alternating rounds, each
# running every workload on every scene once with each build, pinned to one core, then
# the median time a query of each build and the speed-up of B over A (above 1: B is
# faster). Alternating spreads the machine's drift over both builds; on this shared
# machine a single pair of runs differs by up to 10 % with the same code.
#
#   cargo bench --bench intersect --no-run      # build A, then copy its binary aside
#   benches/ab.sh A_BINARY B_BINARY "nearest all" "littlest_tokyo city_s10" 7
#
# Each run is `BENCH_QUERIES=4096 BENCH_PROFILE=<workload>:10` (the ratio table's
# 4 096 distinct queries, ten times over; see README.md). CORE (default 1) picks the
# core. Needs `taskset` (util-linux).
set -eu

if [ $# -lt 4 ]; then
    echo "usage: $0 A_BINARY B_BINARY \"WORKLOADS\" \"SCENES\" [ROUNDS]" >&2
    exit 2
fi
a=$1
b=$2
workloads=$3
scenes=$4
rounds=${5:-7}
core=${CORE:-1}
for binary in "$a" "$b"; do
    if [ ! -x "$binary" ]; then
        echo "$0: $binary is not an executable bench binary" >&2
        exit 2
    fi
done

times=$(mktemp)
trap 'rm -f "$times"' EXIT
round=1
while [ "$round" -le "$rounds" ]; do
    for side in A B; do
        if [ "$side" = A ]; then binary=$a; else binary=$b; fi
        for workload in $workloads; do
            for scene in $scenes; do
                # "profile <scene> <workload>: <time> us per query, ..."
                time=$(BENCH_QUERIES=4096 BENCH_SCENES=$scene BENCH_PROFILE=$workload:10 \
                    taskset -c "$core" "$binary" --bench | awk '$1 == "profile" { print $4 }')
                if [ -z "$time" ]; then
                    echo "$0: $binary printed no time for $workload on $scene" >&2
                    exit 1
                fi
                echo "$side $workload $scene $time" >>"$times"
            done
        done
    done
    round=$((round + 1))
done

echo "workload scene: A median (range), B median (range), speed-up of B, in us a query"
for workload in $workloads; do
    for scene in $scenes; do
        summary=""
        for side in A B; do
            # The median and range of this side's rounds.
            stats=$(awk -v s="$side" -v w="$workload" -v c="$scene" \
                '$1 == s && $2 == w && $3 == c { print $4 }' "$times" | sort -g | awk '
                { t[NR] = $1 }
                END {
                    m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
                    printf "%.3f %.3f %.3f", m, t[1], t[NR]
                }')
            summary="$summary $stats"
        done
        echo "$summary" | awk -v w="$workload" -v c="$scene" '{
            printf "%s %s: %.3f (%.3f-%.3f), %.3f (%.3f-%.3f), %.3fx\n",
                w, c, $1, $2, $3, $4, $5, $6, $1 / $4
        }'
    done
done
