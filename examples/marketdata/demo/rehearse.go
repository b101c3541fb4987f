package demo

import (
	"context"
	"fmt"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/runtime"
)

// FaultRate is the fraction of eastmoney's calls the rehearsal scene
// fails by fault injection, and FaultCalls how many fund flows it asks.
const (
	FaultRate  = 0.3
	FaultCalls = 12
)

// Scene: a rehearsal (SPEC §13; docs/rehearse.md). Fault injection is a
// setting resolved when a breaker is made, as a process started with
// BREAKER_EASTMONEY_FAULT=30% would have it: the scene builds the same
// chain on a registry of its own with Fault: 0.3 for eastmoney (and
// eastmoney's limiter widened, so the rehearsal takes no time). An injected
// fault never reaches eastmoney; it fails the try like an upstream's, the
// try is retried (attempts=2), and when both fail the chain answers from
// sina, its provenance naming the injected fault.
func (s *Scenario) faults(ctx context.Context, rep *Report) error {
	s.scene(fmt.Sprintf("rehearsal: %.0f%% of eastmoney's calls fail by fault injection; the chain falls back", FaultRate*100))
	s.Up.Healthy(marketdata.Eastmoney)
	s.Up.Healthy(marketdata.Sina)
	reg := registry(s.Reset, runtime.WithLogger(s.Logger), runtime.WithoutEnv(),
		runtime.WithConfig(runtime.Config{Name: marketdata.Eastmoney, Fault: FaultRate}),
		runtime.WithRateLimit(marketdata.Eastmoney, 1000, 1000))
	s.log.note("a registry with Fault: %.1f for eastmoney (BREAKER_EASTMONEY_FAULT=%.0f%%), its draws seeded", FaultRate, FaultRate*100)
	flows := marketdata.NewFundFlowSourceChain(s.Client, reg,
		runtime.Fallback[marketdata.FundFlowSource]{Name: marketdata.Sina, Impl: s.Client.Sina()})
	before := s.Up.Requests(marketdata.Eastmoney)
	for range FaultCalls {
		ctx2, p := runtime.WithProvenance(ctx)
		if _, err := flows.FundFlow(ctx2, "600519"); err != nil {
			return fmt.Errorf("the chain did not answer while faults were injected: %w", err)
		}
		rep.FaultFlows = append(rep.FaultFlows, p.String())
		if p.Source == "fallback:"+marketdata.Sina {
			rep.FaultFallbacks++
			if rep.FaultFlow == "" {
				rep.FaultFlow = p.String()
				s.log.row("chain", "FundFlow 600519", "ok", p.String()+" · both tries injected")
			}
		}
	}
	b, _ := reg.Lookup(marketdata.Eastmoney)
	st := b.Stats()
	rep.FaultInjected = st.Injected
	rep.FaultUpstream = s.Up.Requests(marketdata.Eastmoney) - before
	s.log.note("%d fund flows: %d answered by sina; %d tries injected (never sent), %d reached eastmoney; eastmoney %s",
		FaultCalls, rep.FaultFallbacks, rep.FaultInjected, rep.FaultUpstream, st.State)
	return nil
}
