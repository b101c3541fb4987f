package demo

import (
	"context"
	"errors"
	"fmt"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/runtime"
)

// IsolationReason is the operator's reason in the isolation scene.
const IsolationReason = "provider maintenance announced for 14:00-14:30"

// Scene: an operator cuts eastmoney off for an announced maintenance
// (SPEC §14; docs/operate.md), as POST /health/datasources/eastmoney/isolate
// would. Calls fail fast with the operator's reason, the fund-flow chain
// answers from sina and its provenance says why eastmoney was passed
// over; then the operator resumes it and eastmoney answers again.
func (s *Scenario) isolation(ctx context.Context, rep *Report) error {
	s.scene("an operator isolates eastmoney for its maintenance, then resumes it")
	s.Up.Healthy(marketdata.Eastmoney)
	s.Up.Healthy(marketdata.Sina)
	em := s.breaker(marketdata.Eastmoney)
	em.Isolate(IsolationReason)
	s.log.note("operator: isolate eastmoney, reason %q → %s", IsolationReason, em.State())
	_, err := s.stocks.Search(ctx, "gzmt")
	rep.IsolatedErr = err
	s.call(marketdata.Eastmoney, "Search gzmt", err, "")

	ctx2, p := runtime.WithProvenance(ctx)
	if _, err := s.flows.FundFlow(ctx2, "600519"); err != nil {
		return fmt.Errorf("the chain did not answer from its fallback while eastmoney was isolated: %w", err)
	}
	rep.IsolatedFlow = p.String()
	why := ""
	for _, k := range p.Skipped {
		var oe *runtime.OpenError
		if errors.As(k.Err, &oe) && oe.State == runtime.Isolated {
			why = oe.Reason
			rep.IsolatedSkip = k.Source + ": " + oe.Reason
		}
	}
	s.log.row("chain", "FundFlow 600519", "ok", rep.IsolatedFlow+" · "+why)

	em.Resume("maintenance over, provider confirmed")
	s.log.note("operator: resume eastmoney → %s", em.State())
	ctx3, p := runtime.WithProvenance(ctx)
	if _, err := s.flows.FundFlow(ctx3, "600519"); err != nil {
		return fmt.Errorf("eastmoney did not answer after the resume: %w", err)
	}
	rep.ResumedFlow = p.String()
	s.log.row("chain", "FundFlow 600519", "ok", rep.ResumedFlow)
	return nil
}
