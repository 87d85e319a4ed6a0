package dtrain

import (
	"fmt"

	"mpignn/collectives"
	"mpignn/train"
	"mpignn/train/metrics"
)

// phaseReporter labels the training loop's phases for the stall watchdog
// (collectives.Comm.Phase) from the trainer's progress calls, and forwards
// them: "epoch 3 train" while the steps run, "epoch 3 eval" after the last
// step, "epoch 3 metrics/checkpoint" after the epoch's figures are in. The
// stores and the Reducer nest their own labels below ("epoch 3
// train/sample/gather", "epoch 3 train/allreduce").
type phaseReporter struct {
	c       *collectives.Comm
	next    train.Reporter
	steps   int
	epoch   int
	restore func()
}

func (p *phaseReporter) set(epoch int, what string) {
	if p.restore != nil {
		p.restore()
	}
	p.restore = p.c.Phase(fmt.Sprintf("epoch %d %s", epoch, what))
}

func (p *phaseReporter) BeginEpoch(epoch, steps int) {
	p.epoch, p.steps = epoch, steps
	p.set(epoch, "train")
	p.next.BeginEpoch(epoch, steps)
}

func (p *phaseReporter) StepDone(step int, loss float64) {
	if step == p.steps {
		p.set(p.epoch, "eval")
	}
	p.next.StepDone(step, loss)
}

func (p *phaseReporter) EndEpoch(m *metrics.Epoch) {
	p.set(m.Epoch, "metrics/checkpoint")
	p.next.EndEpoch(m)
}
