package textwrap

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLines(t *testing.T) {
	assert.Equal(t, []string{"one two", "three", "four five"}, Lines("one two three  four\nfive", 9))
	assert.Equal(t, []string{"a", "longerthanwidth", "b"}, Lines("a longerthanwidth b", 5))
	assert.Equal(t, []string{""}, Lines("  ", 10))
}
