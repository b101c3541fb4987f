#!/bin/sh
# Instructions per op, exact on a loaded machine (where ns/op swings by 100%
# and more): valgrind's cachegrind counts the instructions of a benchmark
# run at N1 and at N2 fixed iterations (-test.benchtime=Nx, GOMAXPROCS=1),
# and the difference over N2-N1 cancels the process start and the setup.
# Instructions are not time (a fence or a cache miss costs more than its
# count), but they show what a change added or took out of a path.
#
# Usage: instructions.sh BINARY BENCH-REGEXP [N1 N2], in the directory the
# benchmark runs in, e.g. for old and new builds of bench/contend:
#
#	cd bench/contend && ../instructions.sh /tmp/new.test 'WindowSuccess$/time$'
set -e
bin=$1 bench=$2 n1=${3:-100000} n2=${4:-300000}
ir() {
	GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$bin" -test.run '^$' -test.bench "$bench" -test.benchtime "${1}x" -test.cpu 1 2>&1 |
		awk '/I *refs/ { gsub(",", "", $NF); print $NF }'
}
a=$(ir "$n1")
b=$(ir "$n2")
echo "$(basename "$bin") $bench $(((b - a) / (n2 - n1))) instructions/op"
