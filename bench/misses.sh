#!/bin/sh
# Cache misses per op, counted exactly on a loaded machine: like
# instructions.sh, valgrind's cachegrind runs a benchmark at N1 and at N2
# fixed iterations (GOMAXPROCS=1), here with its cache simulation (a 32 KiB
# L1 and a 512 KiB L2 of 64-byte lines, an EPYC core's) and GOGC=off (so
# that no collection lands in one run and not the other), and prints the
# difference over N2-N1 of the instructions, the L1 data misses and the L2
# data misses. A keyed call's cost is mostly its misses (docs/keys.md).
#
# Usage: misses.sh BINARY BENCH-REGEXP [N1 N2], in the directory the
# benchmark runs in, e.g.:
#
#	cd bench/contend && ../misses.sh /tmp/new.test 'KeyedSuccess$/int$'
set -e
bin=$1 bench=$2 n1=${3:-100000} n2=${4:-300000}
run() {
	GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=524288,8,64 \
		--cachegrind-out-file=/dev/null "$bin" -test.run '^$' -test.bench "$bench" -test.benchtime "${1}x" -test.cpu 1 2>&1 |
		awk '/I *refs/ { gsub(",", "", $NF); ir = $NF }
			/D1  misses/ { gsub(",", "", $4); d1 = $4 }
			/LLd misses/ { gsub(",", "", $4); ll = $4 }
			END { print ir, d1, ll }'
}
set -- $(run "$n1") $(run "$n2")
awk -v n="$((n2 - n1))" -v name="$(basename "$bin") $bench" -v ir="$(($4 - $1))" -v d1="$(($5 - $2))" -v ll="$(($6 - $3))" \
	'BEGIN { printf "%s %.1f instructions/op %.2f L1d misses/op %.2f L2d misses/op\n", name, ir / n, d1 / n, ll / n }'
