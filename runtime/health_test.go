package runtime_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthLevelsAndJSON(t *testing.T) {
	reg, clk := newTestRegistry(t)
	assert.Equal(t, runtime.LevelOK, reg.Health().Status)
	reg.Breaker(runtime.Config{Name: "tencent"})
	tdx := reg.Breaker(runtime.Config{Name: "tdx", FailureThreshold: 1, ResetTimeout: time.Minute})
	em := reg.Breaker(runtime.Config{Name: "eastmoney", FailureThreshold: 1, ResetTimeout: time.Second})
	assert.Equal(t, runtime.LevelOK, reg.Health().Status)

	trip(t, em)
	clk.Advance(time.Second) // eastmoney HALF_OPEN
	h := reg.Health()
	assert.Equal(t, runtime.LevelDegraded, h.Status)
	trip(t, tdx)
	h = reg.Health()
	assert.Equal(t, runtime.LevelDown, h.Status, "the worst level wins")
	require.Len(t, h.Breakers, 3)
	assert.Equal(t, []runtime.Level{runtime.LevelDegraded, runtime.LevelDown, runtime.LevelOK},
		[]runtime.Level{h.Breakers[0].Status, h.Breakers[1].Status, h.Breakers[2].Status})

	raw, err := json.Marshal(h)
	require.NoError(t, err)
	var doc struct {
		Status   string `json:"status"`
		Breakers []struct {
			Name      string `json:"name"`
			State     string `json:"state"`
			Status    string `json:"status"`
			Failures  int    `json:"failures"`
			NextProbe string `json:"next_probe"`
		} `json:"breakers"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc), string(raw))
	assert.Equal(t, "down", doc.Status)
	assert.Equal(t, "eastmoney", doc.Breakers[0].Name)
	assert.Equal(t, "HALF_OPEN", doc.Breakers[0].State)
	assert.Equal(t, "degraded", doc.Breakers[0].Status)
	assert.Equal(t, "tdx", doc.Breakers[1].Name)
	assert.Equal(t, "OPEN", doc.Breakers[1].State)
	assert.Equal(t, "down", doc.Breakers[1].Status)
	assert.Equal(t, 1, doc.Breakers[1].Failures)
	assert.Equal(t, "2026-03-02T09:31:01Z", doc.Breakers[1].NextProbe)
	assert.Equal(t, "CLOSED", doc.Breakers[2].State)
	assert.NotContains(t, string(raw), `"calls"`, "uncounted totals are left out")
}
