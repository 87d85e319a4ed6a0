// Command mpignn is the single binary that runs as every MPI rank.
//
//	mpignn <command> [flags]
//
// Run `mpignn help` for the list of commands.
package main
