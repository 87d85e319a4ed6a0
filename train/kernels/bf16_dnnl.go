//go:build (!gonumblas && !openblas) || dnnl

package kernels

// oneDNN's bf16 kernel (oneDNN 2.6, libdnnl-dev): the matmul primitive for
// bf16 inputs with fp32 accumulation and output, the kernel of BF16 (train
// --precision bf16) in the default build and a BenchmarkGemm kernel with
// -tags dnnl. oneDNN 2.6's C API has no bf16 gemm function (only u8s8s32
// and s8s8s32), hence the primitive. Every block of gemmSplit runs on the
// calling thread, so results do not depend on the thread count. The C
// below only builds, runs and frees a primitive; the rounding to bf16 is
// Go's (half.ToBF16).

// #cgo LDFLAGS: -ldnnl -lgomp
// #include <stdlib.h>
// #include <stdint.h>
// #include <omp.h>
// #include <oneapi/dnnl/dnnl.h>
//
// // kern_bf16 is one cached matmul primitive for one shape.
// typedef struct {
//   dnnl_primitive_t prim;
//   dnnl_memory_desc_t a, b, c;
//   size_t scratch;
// } kern_bf16;
//
// static int kern_bf16_create(dnnl_engine_t eng, int ta, int tb, int64_t m,
//     int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
//     float alpha, float beta, kern_bf16 **out) {
//   kern_bf16 *p = calloc(1, sizeof *p);
//   if (!p) return (int)dnnl_out_of_memory;
//   dnnl_dims_t ad = {m, k}, bd = {k, n}, cd = {m, n};
//   dnnl_dims_t as = {lda, 1}, bs = {ldb, 1}, cs = {ldc, 1};
//   if (ta) { as[0] = 1; as[1] = lda; }
//   if (tb) { bs[0] = 1; bs[1] = ldb; }
//   dnnl_status_t st;
//   if ((st = dnnl_memory_desc_init_by_strides(&p->a, 2, ad, dnnl_bf16, as)) ||
//       (st = dnnl_memory_desc_init_by_strides(&p->b, 2, bd, dnnl_bf16, bs)) ||
//       (st = dnnl_memory_desc_init_by_strides(&p->c, 2, cd, dnnl_f32, cs))) {
//     free(p); return (int)st;
//   }
//   dnnl_matmul_desc_t md;
//   if ((st = dnnl_matmul_desc_init(&md, &p->a, &p->b, NULL, &p->c))) { free(p); return (int)st; }
//   dnnl_primitive_attr_t attr;
//   if ((st = dnnl_primitive_attr_create(&attr))) { free(p); return (int)st; }
//   dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
//   if (alpha != 1.0f) dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha);
//   dnnl_post_ops_t po = NULL;
//   if (beta != 0.0f) {
//     dnnl_post_ops_create(&po);
//     dnnl_post_ops_append_sum(po, beta);
//     dnnl_primitive_attr_set_post_ops(attr, po);
//   }
//   dnnl_primitive_desc_t pd;
//   st = dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL);
//   dnnl_primitive_attr_destroy(attr);
//   if (po) dnnl_post_ops_destroy(po);
//   if (st) { free(p); return (int)st; }
//   p->scratch = dnnl_memory_desc_get_size(dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0));
//   st = dnnl_primitive_create(&p->prim, pd);
//   dnnl_primitive_desc_destroy(pd);
//   if (st) { free(p); return (int)st; }
//   *out = p;
//   return 0;
// }
//
// static void kern_bf16_destroy(kern_bf16 *p) {
//   dnnl_primitive_destroy(p->prim);
//   free(p);
// }
//
// // kern_bf16_run executes p on the calling thread with its own stream and
// // scratchpad, so several threads can run the same primitive at once.
// // Debian's oneDNN uses OpenMP: its thread count is pinned to 1 here, as
// // in kern_sgemm, because the Go side runs one block per core.
// static int kern_bf16_run(dnnl_engine_t eng, kern_bf16 *p, const uint16_t *a,
//     const uint16_t *b, float *c) {
//   omp_set_num_threads(1);
//   dnnl_status_t st;
//   dnnl_stream_t s;
//   if ((st = dnnl_stream_create(&s, eng, dnnl_stream_default_flags))) return (int)st;
//   dnnl_memory_t ma = NULL, mb = NULL, mc = NULL, ms = NULL;
//   void *scratch = p->scratch ? malloc(p->scratch) : NULL;
//   if ((st = dnnl_memory_create(&ma, &p->a, eng, (void *)a)) ||
//       (st = dnnl_memory_create(&mb, &p->b, eng, (void *)b)) ||
//       (st = dnnl_memory_create(&mc, &p->c, eng, c))) goto done;
//   int nargs = 3;
//   dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
//   if (scratch) {
//     dnnl_memory_desc_t sd;
//     dnnl_dims_t sdim = {(dnnl_dim_t)p->scratch};
//     dnnl_memory_desc_init_by_tag(&sd, 1, sdim, dnnl_u8, dnnl_a);
//     if ((st = dnnl_memory_create(&ms, &sd, eng, scratch))) goto done;
//     args[nargs].arg = DNNL_ARG_SCRATCHPAD; args[nargs].memory = ms; nargs++;
//   }
//   if ((st = dnnl_primitive_execute(p->prim, s, nargs, args))) goto done;
//   st = dnnl_stream_wait(s);
// done:
//   if (ma) dnnl_memory_destroy(ma);
//   if (mb) dnnl_memory_destroy(mb);
//   if (mc) dnnl_memory_destroy(mc);
//   if (ms) dnnl_memory_destroy(ms);
//   free(scratch);
//   dnnl_stream_destroy(s);
//   return (int)st;
// }
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// bf16Key identifies one cached matmul primitive.
type bf16Key struct {
	tA, tB                 bool
	m, n, k, lda, ldb, ldc int
	alpha, beta            float32
}

// dnnlBF16 multiplies fp32 matrices as bfloat16 with fp32 accumulation and
// output through oneDNN's matmul primitive. It caches one primitive per
// block shape (a model has a handful) and the bf16 copies of its operands;
// Close frees them. Products on one dnnlBF16 must not overlap in time
// (the model runs its products in sequence).
type dnnlBF16 struct {
	eng   C.dnnl_engine_t
	mu    sync.Mutex // guards prims: blocks of one product look up concurrently
	prims map[bf16Key]*C.kern_bf16
	a16   []uint16 // bf16 copy of the last A operand
	b16   []uint16 // bf16 copy of the last B operand
}

// newDNNLBF16 creates the CPU engine the primitives run on.
func newDNNLBF16() (*dnnlBF16, error) {
	d := &dnnlBF16{prims: map[bf16Key]*C.kern_bf16{}}
	if st := C.dnnl_engine_create(&d.eng, C.dnnl_cpu, 0); st != C.dnnl_success {
		return nil, fmt.Errorf("kernels: oneDNN CPU engine: status %d", int(st))
	}
	return d, nil
}

// newNativeBF16 is BF16's kernel on oneDNN. It fails where oneDNN has no
// bf16 matmul (status 3, unimplemented: on this project's AVX2 CPU, or
// under a SetISA cap below the bf16 classes), which it finds out by
// building a 1x1x1 primitive, so that the refusal comes at start-up and not
// in the first product.
func newNativeBF16() (*BF16, error) {
	d, err := newDNNLBF16()
	if err != nil {
		return nil, err
	}
	class := bf16Class(int(C.dnnl_get_effective_cpu_isa()))
	if _, err := d.prim(bf16Key{m: 1, n: 1, k: 1, lda: 1, ldb: 1, ldc: 1, alpha: 1}); err != nil {
		d.Close()
		return nil, fmt.Errorf("oneDNN has no bf16 matmul on this CPU at instruction set %s: %w", class, err)
	}
	return &BF16{run: d.serial, close: d.Close, path: "onednn " + class}, nil
}

// bf16Class names the bf16 kernel class of a dnnl_cpu_isa_t value
// (dnnl_types.h, oneDNN 2.6): AMX tiles, AVX-512 with its BF16 dot
// products, or below that no native bf16 (oneDNN then has no matmul).
func bf16Class(v int) string {
	switch {
	case v&0x3e7 == 0x3e7:
		return "avx512_core_amx"
	case v&0xe7 == 0xe7:
		return "avx512_core_bf16"
	}
	return isaClass(v)
}

// Close frees the primitives and the engine.
func (d *dnnlBF16) Close() {
	for _, p := range d.prims {
		C.kern_bf16_destroy(p)
	}
	d.prims = nil
	C.dnnl_engine_destroy(d.eng)
}

// gemm is a gemm-compatible product: both operands are converted to bf16 on
// every call (activations change every call), then multiplied block by
// block (BenchmarkGemm's per-call kernel).
func (d *dnnlBF16) gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	d.b16 = toBF16(b[:span(br, bc, ldb)], d.b16)
	d.gemmB16(tA, tB, m, n, k, alpha, a, lda, d.b16, ldb, beta, c, ldc)
}

// gemmB16 is gemm with op(B) already in bf16: weights converted once per
// step rather than once per product.
func (d *dnnlBF16) gemmB16(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b16 []uint16, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	d.a16 = toBF16(a[:span(ar, ac, lda)], d.a16)
	gemmSplit(d.serial, tA, tB, m, n, k, alpha, d.a16, lda, b16, ldb, beta, c, ldc)
}

// prim returns the primitive cached for key, building it on first use.
func (d *dnnlBF16) prim(key bf16Key) (*C.kern_bf16, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.prims[key]; ok {
		return p, nil
	}
	ta, tb := C.int(0), C.int(0)
	if key.tA {
		ta = 1
	}
	if key.tB {
		tb = 1
	}
	var p *C.kern_bf16
	if st := C.kern_bf16_create(d.eng, ta, tb, C.int64_t(key.m), C.int64_t(key.n), C.int64_t(key.k),
		C.int64_t(key.lda), C.int64_t(key.ldb), C.int64_t(key.ldc), C.float(key.alpha), C.float(key.beta), &p); st != 0 {
		return nil, fmt.Errorf("matmul primitive: status %d", int(st))
	}
	d.prims[key] = p
	return p, nil
}

// serial runs one block through the primitive cached for its shape. A
// failure past newNativeBF16's probe is a programming error or a failed
// allocation, and panics as dnnlSgemm does.
func (d *dnnlBF16) serial(tA, tB bool, m, n, k int, alpha float32, a []uint16, lda int, b []uint16, ldb int, beta float32, c []float32, ldc int) {
	key := bf16Key{tA, tB, m, n, k, lda, ldb, ldc, alpha, beta}
	p, err := d.prim(key)
	if err != nil {
		panic(fmt.Sprintf("kernels: oneDNN bf16 matmul %+v: %v", key, err))
	}
	if st := C.kern_bf16_run(d.eng, p, (*C.uint16_t)(unsafe.Pointer(&a[0])), (*C.uint16_t)(unsafe.Pointer(&b[0])),
		(*C.float)(unsafe.Pointer(&c[0]))); st != 0 {
		panic(fmt.Sprintf("kernels: oneDNN bf16 matmul %+v: status %d", key, int(st)))
	}
}
