package train

import "mpignn/train/metrics"

// newEpochMetrics builds an epoch line; val and test are nil when the epoch
// was not evaluated.
func newEpochMetrics(tr TrainResult, val, test *EvalResult) metrics.Epoch {
	m := metrics.Epoch{
		Type: "epoch", Epoch: tr.Epoch,
		Loss: tr.Loss, TrainAcc: tr.Acc,
		EpochS:     tr.Wall.Seconds(),
		SampleS:    tr.Times.Seconds(PhaseSample),
		GatherS:    tr.Times.Seconds(PhaseGather),
		ForwardS:   tr.Times.Seconds(PhaseForward),
		BackwardS:  tr.Times.Seconds(PhaseBackward),
		AllreduceS: tr.Times.Seconds(PhaseAllreduce),
		OptimizerS: tr.Times.Seconds(PhaseOptimizer),
		WaitS:      tr.Times.Seconds(PhaseWait),
		Steps:      tr.Steps, Seeds: tr.Seeds, RemoteRows: tr.RemoteRows,
	}
	if val != nil && test != nil {
		m.ValLoss, m.ValAcc = &val.Loss, &val.Acc
		m.TestLoss, m.TestAcc = &test.Loss, &test.Acc
		m.EvalS = (val.Wall + test.Wall).Seconds()
		m.SetLink(val.Link, test.Link)
		m.SetTargets(val.Targets, test.Targets)
	}
	if m.EpochS > 0 {
		m.StepsPerS = float64(tr.Steps) / m.EpochS
	}
	if tr.CacheLookups > 0 {
		m.CacheHitRate = float64(tr.CacheHits) / float64(tr.CacheLookups)
	}
	return m
}
