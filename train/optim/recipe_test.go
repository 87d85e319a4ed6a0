package optim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refAdamW is torch.optim.AdamW written out in float64 from its
// documented algorithm: p -= lr·wd·p, then Adam's update on the plain
// gradient.
func refAdamW(p, m, v, g []float64, t int, lr, b1, b2, eps, wd float64) {
	for i := range p {
		p[i] -= lr * wd * p[i]
		m[i] = b1*m[i] + (1-b1)*g[i]
		v[i] = b2*v[i] + (1-b2)*g[i]*g[i]
		mh := m[i] / (1 - math.Pow(b1, float64(t)))
		vh := v[i] / (1 - math.Pow(b2, float64(t)))
		p[i] -= lr * mh / (math.Sqrt(vh) + eps)
	}
}

// refSGD is torch.optim.SGD (dampening 0) written out in float64.
func refSGD(p, buf, g []float64, t int, lr, mom, wd float64, nesterov bool) {
	for i := range p {
		d := g[i] + wd*p[i]
		if mom != 0 {
			if t == 1 {
				buf[i] = d
			} else {
				buf[i] = mom*buf[i] + d
			}
			if nesterov {
				d += mom * buf[i]
			} else {
				d = buf[i]
			}
		}
		p[i] -= lr * d
	}
}

// testGrads is the gradient of step `step` (float32 and its float64 twin).
func testGrads(step, n int) ([]float32, []float64) {
	g32, g := make([]float32, n), make([]float64, n)
	for i := range g {
		g32[i] = float32(math.Sin(float64(step*7+i))) * 0.1
		g[i] = float64(g32[i])
	}
	return g32, g
}

func testParams(n int) ([]float32, []float64) {
	p32, p := make([]float32, n), make([]float64, n)
	for i := range p {
		p32[i] = float32(i-3) * 0.37
		p[i] = float64(p32[i])
	}
	return p32, p
}

func TestAdamWMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  AdamConfig
		lrs  func(step int) float32 // the scheduled rate of each step
	}{
		{"no-decay", DefaultAdam(0.01, 0), nil},
		{"decay", DefaultAdam(0.003, 0.01), nil},
		{"strong-decay", DefaultAdam(0.05, 0.5), nil},
		{"scheduled", DefaultAdam(0.02, 0.1), func(s int) float32 { return 0.02 / float32(s) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 7
			a, err := NewAdam(n, tc.cfg)
			require.NoError(t, err)
			a.Decoupled = true
			p32, p := testParams(n)
			m, v := make([]float64, n), make([]float64, n)
			c := tc.cfg
			for step := 1; step <= 20; step++ {
				g32, g := testGrads(step, n)
				lr := c.LR
				if tc.lrs != nil {
					lr = tc.lrs(step)
				}
				require.NoError(t, a.StepLR(p32, g32, lr))
				refAdamW(p, m, v, g, step, float64(lr), float64(c.Beta1), float64(c.Beta2), float64(c.Eps), float64(c.WeightDecay))
			}
			for i := range p {
				assert.InDelta(t, p[i], float64(p32[i]), 1e-5*(1+math.Abs(p[i])), "param %d", i)
			}
		})
	}
}

// TestAdamWWithoutDecayIsAdam: AdamW and Adam differ only in the decay.
func TestAdamWWithoutDecayIsAdam(t *testing.T) {
	const n = 9
	a, _ := NewAdam(n, DefaultAdam(0.01, 0))
	w, _ := NewAdam(n, DefaultAdam(0.01, 0))
	w.Decoupled = true
	pa, _ := testParams(n)
	pw, _ := testParams(n)
	for step := 1; step <= 5; step++ {
		g, _ := testGrads(step, n)
		require.NoError(t, a.Step(pa, g))
		require.NoError(t, w.Step(pw, g))
	}
	assert.Equal(t, pa, pw)
}

func TestSGDMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  SGDConfig
	}{
		{"plain", SGDConfig{}},
		{"decay", SGDConfig{WeightDecay: 0.01}},
		{"momentum", SGDConfig{Momentum: 0.9}},
		{"momentum-decay", SGDConfig{Momentum: 0.5, WeightDecay: 0.05}},
		{"nesterov", SGDConfig{Momentum: 0.9, Nesterov: true}},
		{"nesterov-decay", SGDConfig{Momentum: 0.8, Nesterov: true, WeightDecay: 0.01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n, lr = 7, 0.1
			s, err := NewSGD(n, tc.cfg)
			require.NoError(t, err)
			p32, p := testParams(n)
			buf := make([]float64, n)
			for step := 1; step <= 20; step++ {
				g32, g := testGrads(step, n)
				require.NoError(t, s.Step(p32, g32, lr))
				refSGD(p, buf, g, step, lr, float64(tc.cfg.Momentum), float64(tc.cfg.WeightDecay), tc.cfg.Nesterov)
			}
			assert.EqualValues(t, 20, s.T)
			for i := range p {
				assert.InDelta(t, p[i], float64(p32[i]), 1e-5*(1+math.Abs(p[i])), "param %d", i)
			}
		})
	}
}

// TestSGDFirstStep: the first step of plain SGD is p - lr·g exactly, and
// with momentum the buffer starts as the gradient (PyTorch clones it).
func TestSGDFirstStep(t *testing.T) {
	s, err := NewSGD(2, SGDConfig{Momentum: 0.9})
	require.NoError(t, err)
	p := []float32{1, -2}
	require.NoError(t, s.Step(p, []float32{0.5, 0.25}, 0.1))
	assert.Equal(t, []float32{1 - float32(0.1)*0.5, -2 - float32(0.1)*0.25}, p)
	assert.Equal(t, []float32{0.5, 0.25}, s.Buf)
}

func TestSGDConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  SGDConfig
		want string
	}{
		{SGDConfig{Momentum: -0.1}, "momentum"},
		{SGDConfig{Momentum: 1}, "momentum"},
		{SGDConfig{Nesterov: true}, "nesterov"},
		{SGDConfig{WeightDecay: -1}, "weight_decay"},
	} {
		_, err := NewSGD(1, tc.cfg)
		assert.ErrorContains(t, err, tc.want, "%+v", tc.cfg)
	}
}

func TestScheduleFactor(t *testing.T) {
	step, err := ParseSchedule("step:2,0.5")
	require.NoError(t, err)
	cos, _ := ParseSchedule("cosine")
	constant, _ := ParseSchedule("")
	warm := constant
	warm.Warmup = 4
	cosWarm := cos
	cosWarm.Warmup = 10
	for _, tc := range []struct {
		name  string
		s     Schedule
		step  int64
		epoch int
		total int64
		want  float64
	}{
		{"constant", constant, 123, 7, 0, 1},
		{"step epoch 0", step, 0, 0, 0, 1},
		{"step epoch 1", step, 50, 1, 0, 1},
		{"step epoch 2", step, 100, 2, 0, 0.5},
		{"step epoch 5", step, 250, 5, 0, 0.25},
		{"cosine start", cos, 0, 0, 100, 1},
		{"cosine quarter", cos, 25, 0, 100, (1 + math.Cos(math.Pi/4)) / 2},
		{"cosine half", cos, 50, 1, 100, 0.5},
		{"cosine end", cos, 100, 2, 100, 0},
		{"cosine past end", cos, 130, 2, 100, 0},
		{"warm-up first", warm, 0, 0, 0, 0.25},
		{"warm-up third", warm, 2, 0, 0, 0.75},
		{"warm-up done", warm, 3, 0, 0, 1},
		{"warm-up after", warm, 4, 0, 0, 1},
		{"cosine warm-up", cosWarm, 4, 0, 100, 0.5 * (1 + math.Cos(math.Pi*4/100)) / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, tc.s.Factor(tc.step, tc.epoch, tc.total), 1e-15)
		})
	}
	assert.Equal(t, float32(0.01), Scale(0.01, 1), "a factor of 1 keeps the rate's bits")
}

func TestParseScheduleRefuses(t *testing.T) {
	for _, spec := range []string{"linear", "step", "step:0,0.5", "step:2", "step:2,0", "step:2,x", "cosine:3"} {
		_, err := ParseSchedule(spec)
		assert.Error(t, err, spec)
	}
}

func TestClipGradNorm(t *testing.T) {
	for _, tc := range []struct {
		name    string
		g       []float32
		max     float64
		norm    float64
		clipped []float32
	}{
		{"below", []float32{3, 4}, 10, 5, []float32{3, 4}},
		{"above", []float32{3, 4}, 1, 5, []float32{float32(3) * float32(1/(5+1e-6)), float32(4) * float32(1/(5+1e-6))}},
		{"zero", []float32{0, 0}, 1, 0, []float32{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := append([]float32(nil), tc.g...)
			assert.InDelta(t, tc.norm, ClipGradNorm(g, tc.max), 1e-12)
			assert.Equal(t, tc.clipped, g)
		})
	}
	// After clipping the norm is the bound (to float32 rounding).
	g, _ := testGrads(3, 50)
	ClipGradNorm(g, 0.01)
	assert.InDelta(t, 0.01, ClipGradNorm(g, 1), 1e-7)
}

// TestAgainstPyTorch compares 20 steps (testParams, testGrads) with the
// weights PyTorch 1.13 computed from the same float32 inputs:
//
//	p = torch.nn.Parameter(torch.tensor([i-3 for i in range(7)], dtype=torch.float32) * torch.tensor(0.37))
//	for s in 1..20: p.grad = torch.tensor([sin(7s+i)], dtype=torch.float32) * torch.tensor(0.1)
//	                [torch.nn.utils.clip_grad_norm_([p], 0.05)]; opt.step()
//
// with opt torch.optim.AdamW(lr=0.01, weight_decay=0.1), SGD(lr=0.1,
// momentum=0.9, weight_decay=0.01), SGD(lr=0.1, momentum=0.8,
// nesterov=True, weight_decay=0.01) and SGD(lr=0.1) after clipping.
func TestAgainstPyTorch(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []float64
	}{
		{"adamw", []float64{-1.13649106, -0.750228286, -0.345696777, 0.0503601544, 0.391935766, 0.715370417, 1.03627539}},
		{"sgd-momentum-decay", []float64{-1.0803293, -0.689082146, -0.264875382, 0.102567084, 0.375709862, 0.603716195, 0.877247751}},
		{"sgd-nesterov-decay", []float64{-1.08257711, -0.717829347, -0.3179169, 0.0618848987, 0.384790003, 0.666323006, 0.960045874}},
		{"sgd-clip", []float64{-1.11545038, -0.744588673, -0.369508088, 0.00512019405, 0.375040919, 0.740327179, 1.10531235}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 7
			p, _ := testParams(n)
			var step func(g []float32)
			switch tc.name {
			case "adamw":
				a, err := NewAdam(n, DefaultAdam(0.01, 0.1))
				require.NoError(t, err)
				a.Decoupled = true
				step = func(g []float32) { require.NoError(t, a.Step(p, g)) }
			default:
				cfg := map[string]SGDConfig{
					"sgd-momentum-decay": {Momentum: 0.9, WeightDecay: 0.01},
					"sgd-nesterov-decay": {Momentum: 0.8, Nesterov: true, WeightDecay: 0.01},
					"sgd-clip":           {},
				}[tc.name]
				s, err := NewSGD(n, cfg)
				require.NoError(t, err)
				step = func(g []float32) {
					if tc.name == "sgd-clip" {
						ClipGradNorm(g, 0.05)
					}
					require.NoError(t, s.Step(p, g, 0.1))
				}
			}
			for s := 1; s <= 20; s++ {
				g, _ := testGrads(s, n)
				step(g)
			}
			worst := 0.0
			for i := range p {
				assert.InDelta(t, tc.want[i], float64(p[i]), 1e-6, "param %d", i)
				worst = max(worst, math.Abs(tc.want[i]-float64(p[i])))
			}
			t.Logf("%s: %.3g from PyTorch at most", tc.name, worst)
		})
	}
}
