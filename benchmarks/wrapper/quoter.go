// Package wrapper measures a generated wrapper against a direct call. The
// wrapper in quoter_breaker.go is real breakergen output, kept fresh by
// "go run ./cmd/breakergen -check ./..." like every generated file of the
// repository.
package wrapper

import "context"

//go:generate go run github.com/breakergen/breakergen/cmd/breakergen

// Quoter is the shape of a typical data source.
//
//breaker:name=bench-quotes threshold=1073741824 chain
type Quoter interface {
	Quote(ctx context.Context, code string) (int, error)
}
