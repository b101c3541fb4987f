// Package templates holds the sources of the web pages that breakergen's
// packages serve, embedded so that a binary needs no files at run time.
//
// dashboard.html is an [html/template] source for the operator dashboard
// of [github.com/breakergen/breakergen/runtime/httphealth]; dashboard.css
// and dashboard.js are inlined into it by that package, which also parses
// the template with the functions it uses. Edit them here; the package
// that serves a page owns its data and its tests.
package templates

import "embed"

// FS holds dashboard.html, dashboard.css and dashboard.js. It is read-only
// and safe for concurrent use.
//
//go:embed dashboard.html dashboard.css dashboard.js
var FS embed.FS
