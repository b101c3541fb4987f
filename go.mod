module github.com/breakergen/breakergen

go 1.25.0
