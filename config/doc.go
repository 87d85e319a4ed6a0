// Package config holds what every options type of mpignn shares: the
// error a Validate method returns, which names the field at fault rather
// than the command-line flag that fills it. The library never spells a
// flag; a command line maps each field to its flag when it prints the
// error (FieldError.Render), so its users read the flag they typed.
//
// It is a leaf package: graph, partition, sample and train import it and
// it imports nothing of mpignn.
package config
