#ifndef SB_HEAP_STATS_H
#define SB_HEAP_STATS_H

// Heap figures for the memory benchmark (issue 3: "< 500 KB memory per participant").
// glibc's mallinfo2() (2.33+) and malloc_info() are in <malloc.h>, which Swift's Glibc
// module does not export; these wrappers give them to Swift.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Bytes the program holds from malloc, all arenas: mallinfo2().uordblks (in-use chunks,
/// including the per-thread tcache's cached chunks) + hblkhd (mmapped chunks).
size_t sb_heap_in_use(void);

/// Bytes in mmapped chunks (mallinfo2().hblkhd): allocations at or above the mmap threshold.
size_t sb_heap_mmapped(void);

/// In-use bytes per arena, from malloc_info(): system_mem − free chunks (fast + rest, the top
/// chunk included) of each `<heap nr=…>`. Writes up to `capacity` figures to `inUse` in arena
/// order (0 = main arena) and returns the arena count (-1 on error). Mmapped chunks belong to
/// no arena and are not included.
int sb_heap_arenas_in_use(size_t *inUse, int capacity);

/// mallopt(M_MMAP_THRESHOLD, bytes): allocations below `bytes` come from the calling thread's
/// arena instead of their own mmap (so arena figures see them). Returns mallopt's result.
int sb_heap_set_mmap_threshold(int bytes);

#ifdef __cplusplus
}
#endif

#endif
