//go:build (gonumblas || openblas) && !dnnl

package kernels

import "errors"

// newNativeBF16 has no kernel to return: bf16 products need oneDNN, which
// the openblas and gonumblas builds leave out (-tags dnnl adds it).
func newNativeBF16() (*BF16, error) {
	return nil, errors.New("this build has no bf16 kernel: bf16 products need the default (oneDNN) build")
}
