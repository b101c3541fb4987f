// Package demo is breakergen's market-data scenario: a fake of four
// upstreams on loopback, the generated wrappers around a real HTTP client,
// and a scripted outage and recovery printed as it happens. cmd/demo runs
// it ([Main]); commands in other modules (the metrics and fleet demos) run
// it too and mount their own handlers beside the dashboard.
package demo
