#ifndef SB_THREAD_AFFINITY_H
#define SB_THREAD_AFFINITY_H

// CPU pinning for benchmarks (sched_setaffinity needs _GNU_SOURCE, which Swift's Glibc
// module does not expose): the forwarding benchmark runs the SFU loop on one core and the
// load generator on the other, so the wall-clock figure is one core's worth of forwarding.

#ifdef __cplusplus
extern "C" {
#endif

/// Pins the calling thread to `cpu`; 0 on success, else an errno value (EINVAL: no such CPU).
int sb_pin_this_thread_to_cpu(int cpu);

/// Lets the calling thread run on every CPU again; 0 or an errno value.
int sb_unpin_this_thread(void);

/// The CPU the calling thread runs on now (sched_getcpu), -1 on error.
int sb_current_cpu(void);

/// The calling thread's kernel id (gettid), for /proc/self/task/<tid>/schedstat.
int sb_current_tid(void);

/// CPUs this process may run on (sched_getaffinity), at least 1.
int sb_allowed_cpu_count(void);

#ifdef __cplusplus
}
#endif

#endif
