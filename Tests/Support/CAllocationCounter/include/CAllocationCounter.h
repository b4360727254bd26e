#ifndef SB_ALLOCATION_COUNTER_H
#define SB_ALLOCATION_COUNTER_H

// Heap allocation counter for tests (issue 3: "no per-packet heap allocation on the
// forwarding path" must be a test that can fail).
//
// Linking this target into a test executable interposes malloc, calloc, realloc,
// posix_memalign, aligned_alloc, memalign, valloc and pvalloc: every call is forwarded to
// glibc's __libc_* entry points, and calls made on a thread that enabled counting add one to
// a global atomic counter. free is not interposed (glibc's own). Threads that did not enable
// counting pay one thread-local load per allocation.

#include <stdbool.h>
#include <stdint.h>

#include "ThreadAffinity.h"
#include "HeapStats.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Starts (true) or stops (false) counting the calling thread's allocations.
/// Whether allocations are counted at all: false in a build with AddressSanitizer, which
/// replaces malloc itself. Tests that count skip then.
bool sb_alloc_count_available(void);

void sb_alloc_count_enable_this_thread(bool enabled);

/// Whether the calling thread counts.
bool sb_alloc_count_is_enabled_this_thread(void);

/// Allocations counted so far, all counting threads together (monotonic).
uint64_t sb_alloc_count_read(void);

/// Records the call stacks of the next `count` counted allocations (0 stops recording);
/// clears what was recorded before. Stacks come from glibc's backtrace().
void sb_alloc_backtrace_arm(int count);

/// Records stacks of the calling thread's counted allocations while enabled (off by default;
/// e.g. around one handler, to see only its allocations).
void sb_alloc_backtrace_this_thread(bool enabled);

/// Number of stacks recorded since the last arm (at most the armed count, 64 at most).
int sb_alloc_backtrace_recorded(void);

/// Copies the frame addresses of recorded stack `index` (up to `capacity`) to `frames`;
/// returns how many were copied (0 for an index past the recorded stacks).
int sb_alloc_backtrace_frames(int index, void **frames, int capacity);

/// Writes recorded stack `index` symbolized (backtrace_symbols_fd) to `fd`.
void sb_alloc_backtrace_print(int index, int fd);

#ifdef __cplusplus
}
#endif

#endif
