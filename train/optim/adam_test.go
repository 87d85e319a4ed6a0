package optim

import (
	"math"
	"strings"
	"testing"
)

// refAdam is torch.optim.Adam (amsgrad=False) written out in float64 from
// its documented algorithm: g += wd·p; m,v moments; bias-corrected step.
func refAdam(p, m, v []float64, g []float64, t int, lr, b1, b2, eps, wd float64) {
	for i := range p {
		gi := g[i] + wd*p[i]
		m[i] = b1*m[i] + (1-b1)*gi
		v[i] = b2*v[i] + (1-b2)*gi*gi
		mh := m[i] / (1 - math.Pow(b1, float64(t)))
		vh := v[i] / (1 - math.Pow(b2, float64(t)))
		p[i] -= lr * mh / (math.Sqrt(vh) + eps)
	}
}

func TestAdamMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  AdamConfig
	}{
		{"plain", DefaultAdam(0.01, 0)},
		{"weight-decay", DefaultAdam(0.003, 5e-4)},
		{"strong-decay", DefaultAdam(0.05, 0.1)},
		{"betas", AdamConfig{LR: 0.02, Beta1: 0.5, Beta2: 0.9, Eps: 1e-6, WeightDecay: 0.01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 7
			a, err := NewAdam(n, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			p32 := make([]float32, n)
			p, m, v := make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range p {
				p32[i] = float32(i-3) * 0.37
				p[i] = float64(p32[i])
			}
			c := tc.cfg
			for step := 1; step <= 20; step++ {
				g32 := make([]float32, n)
				g := make([]float64, n)
				for i := range g {
					g32[i] = float32(math.Sin(float64(step*7+i))) * 0.1
					g[i] = float64(g32[i])
				}
				if err := a.Step(p32, g32); err != nil {
					t.Fatal(err)
				}
				refAdam(p, m, v, g, step, float64(c.LR), float64(c.Beta1), float64(c.Beta2), float64(c.Eps), float64(c.WeightDecay))
			}
			for i := range p {
				if math.Abs(float64(p32[i])-p[i]) > 1e-5*(1+math.Abs(p[i])) {
					t.Errorf("param %d: %v, reference %v", i, p32[i], p[i])
				}
			}
			if a.T != 20 {
				t.Errorf("step count %d, want 20", a.T)
			}
		})
	}
}

// TestAdamWeightDecayIsL2: with a zero gradient, coupled (L2) decay makes
// the first Adam step lr·sign(p) — the decay passes through the moment
// normalisation — whereas decoupled AdamW would move p by lr·wd·p.
func TestAdamWeightDecayIsL2(t *testing.T) {
	a, err := NewAdam(2, DefaultAdam(0.1, 0.01))
	if err != nil {
		t.Fatal(err)
	}
	p := []float32{2, -3}
	if err := a.Step(p, []float32{0, 0}); err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(p[0])-1.9) > 1e-5 || math.Abs(float64(p[1])+2.9) > 1e-5 {
		t.Fatalf("after one decay-only step p = %v, want [1.9 -2.9] (L2 decay through Adam)", p)
	}
}

func TestAdamErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  AdamConfig
		want string
	}{
		{DefaultAdam(0, 0), "lr"},
		{DefaultAdam(float32(math.NaN()), 0), "lr"},
		{AdamConfig{LR: 1, Beta1: 1, Beta2: 0.9, Eps: 1e-8}, "beta1"},
		{AdamConfig{LR: 1, Beta1: 0.9, Beta2: -0.1, Eps: 1e-8}, "beta2"},
		{AdamConfig{LR: 1, Beta1: 0.9, Beta2: 0.9}, "eps"},
		{DefaultAdam(0.1, -1), "weight_decay"},
	} {
		if _, err := NewAdam(3, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want mention of %q", tc.cfg, err, tc.want)
		}
	}
	a, _ := NewAdam(3, DefaultAdam(0.1, 0))
	if err := a.Step(make([]float32, 2), make([]float32, 3)); err == nil {
		t.Error("size mismatch accepted")
	}
}
