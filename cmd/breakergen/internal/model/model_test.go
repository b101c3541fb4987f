package model

import (
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIdent(t *testing.T) {
	for name, want := range map[string]string{
		"eastmoney":     "eastmoney",
		"fallback:sina": "fallbackSina",
		"a-b.c_d":       "aBCD",
		"2fa":           "b2fa",
		"-":             "b",
	} {
		assert.Equal(t, want, ident(name), name)
	}
}

func TestParsePos(t *testing.T) {
	assert.Equal(t, token.Position{Filename: "/a/b.go", Line: 3, Column: 7}, parsePos("/a/b.go:3:7"))
	assert.Equal(t, token.Position{Filename: "c:/a.go", Line: 3}, parsePos("c:/a.go:3"))
	for _, s := range []string{"", "-"} {
		p := parsePos(s)
		assert.False(t, p.IsValid(), s)
	}
}
