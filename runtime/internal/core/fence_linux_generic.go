//go:build linux && (arm64 || riscv64 || loong64)

package core

const sysMembarrier = 283 // the generic syscall table's
