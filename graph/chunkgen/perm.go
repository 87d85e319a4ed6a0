package chunkgen

import "mpignn/internal/hashkey"

// perm is a seeded pseudo-random permutation of [0,n) computable in both
// directions from one value: a balanced four-round Feistel network on the
// smallest even number of bits that covers n, restricted to [0,n) by cycle
// walking (apply again until the value falls inside; the domain is less
// than 4n, so a few steps on average).
type perm struct {
	n    uint64
	half uint
	mask uint64
	keys [4]uint64
}

func newPerm(n, seed, tag uint64) perm {
	bits := uint(2)
	for bits < 64 && uint64(1)<<bits < n {
		bits++
	}
	bits += bits % 2
	p := perm{n: n, half: bits / 2, mask: 1<<(bits/2) - 1}
	for r := range p.keys {
		p.keys[r] = hashkey.Hash64(tag, seed, uint64(r))
	}
	return p
}

// round is the Feistel round function: one step of the stream keyed by the
// round key and the half block.
func (p *perm) round(r int, x uint64) uint64 {
	s := hashkey.NewStream(p.keys[r] ^ x)
	return s.Uint64() & p.mask
}

// fwd maps x in [0,n) to its image in [0,n).
func (p *perm) fwd(x uint64) uint64 {
	for {
		l, r := x>>p.half, x&p.mask
		for i := range p.keys {
			l, r = r, l^p.round(i, r)
		}
		x = l<<p.half | r
		if x < p.n {
			return x
		}
	}
}

// inv is fwd's inverse.
func (p *perm) inv(y uint64) uint64 {
	for {
		l, r := y>>p.half, y&p.mask
		for i := len(p.keys) - 1; i >= 0; i-- {
			l, r = r^p.round(i, l), l
		}
		y = l<<p.half | r
		if y < p.n {
			return y
		}
	}
}
