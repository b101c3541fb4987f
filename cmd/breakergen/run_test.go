package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExitCodes(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.NoError(t, run([]string{"-h"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "usage: breakergen")
	assert.Empty(t, out.String())

	errOut.Reset()
	err := run([]string{"-nope"}, &out, &errOut)
	assert.Equal(t, 2, exitCode(err))
	assert.Contains(t, errOut.String(), "flag provided but not defined")

	assert.Equal(t, 1, exitCode(errReported))
}

func TestParseArgs(t *testing.T) {
	var errOut bytes.Buffer
	o, err := parseArgs([]string{"-type", "A, B,,", "-tags", "a,b", "-check", "./x", "./y/..."}, &errOut)
	assert.NoError(t, err)
	assert.Equal(t, []string{"A", "B"}, o.types)
	assert.Equal(t, "a,b", o.tags)
	assert.True(t, o.check)
	assert.Equal(t, []string{"./x", "./y/..."}, o.patterns)

	o, err = parseArgs(nil, &errOut)
	assert.NoError(t, err)
	assert.Equal(t, []string{"."}, o.patterns)
}
