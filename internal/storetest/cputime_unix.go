//go:build unix

package storetest

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, user and system: a
// benchmark's cost that other processes on the machine do not change, as
// they change its wall-clock rate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
