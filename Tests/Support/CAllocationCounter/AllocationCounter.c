// See include/CAllocationCounter.h. Interposition works because a symbol defined in the
// executable precedes the same symbol in libc.so for every shared object's lookups
// (ELF symbol resolution order); glibc documents replacing malloc this way (glibc manual,
// "Replacing malloc") and exports __libc_malloc & co. for forwarding.
#define _GNU_SOURCE
#include "CAllocationCounter.h"

#include <errno.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

// initial-exec: no __tls_get_addr (which may itself allocate) inside malloc.
static __thread bool counting __attribute__((tls_model("initial-exec")));
static __thread bool inside __attribute__((tls_model("initial-exec")));
// Stacks are recorded only on threads (and in the spans) that ask for them.
static __thread bool recording __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t allocations;

// 64 stacks of 32 frames: enough to name every distinct source in a test window.
#define SB_MAX_STACKS 64
#define SB_MAX_FRAMES 32
static void *stacks[SB_MAX_STACKS][SB_MAX_FRAMES];
static int stackDepths[SB_MAX_STACKS];
static _Atomic int stacksWanted;
static _Atomic int stacksTaken;

static inline void note(void) {
    if (__builtin_expect(!counting, 1)) return;
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    if (!recording || inside || atomic_load_explicit(&stacksWanted, memory_order_relaxed) == 0) return;
    int slot = atomic_fetch_add(&stacksTaken, 1);
    if (slot >= atomic_load(&stacksWanted) || slot >= SB_MAX_STACKS) return;
    inside = true;  // backtrace() must not record itself
    stackDepths[slot] = backtrace(stacks[slot], SB_MAX_FRAMES);
    inside = false;
}

// Under AddressSanitizer (`swift test --sanitize=address`) the sanitizer replaces malloc
// itself and calls it while it starts, before this file's thread-locals can be read: the
// interposers are left out there, and `sb_alloc_count_available` says so, for the tests
// that count to skip.
#if defined(__SANITIZE_ADDRESS__) || (defined(__has_feature) && __has_feature(address_sanitizer))
#define SB_COUNTING_AVAILABLE 0
#else
#define SB_COUNTING_AVAILABLE 1
#endif

bool sb_alloc_count_available(void) { return SB_COUNTING_AVAILABLE; }

#if SB_COUNTING_AVAILABLE
void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { note(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { note(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *valloc(size_t size) { note(); return __libc_valloc(size); }
void *pvalloc(size_t size) { note(); return __libc_pvalloc(size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    // POSIX: a power of two multiple of sizeof(void *), else EINVAL.
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    note();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}
#endif

void sb_alloc_count_enable_this_thread(bool enabled) { counting = enabled; }
bool sb_alloc_count_is_enabled_this_thread(void) { return counting; }
uint64_t sb_alloc_count_read(void) { return atomic_load(&allocations); }

void sb_alloc_backtrace_this_thread(bool enabled) { recording = enabled; }

void sb_alloc_backtrace_arm(int count) {
    // The first backtrace() loads libgcc_s (dlopen allocates): do it here, not counted.
    void *warm[2];
    bool was = counting;
    counting = false;
    backtrace(warm, 2);
    counting = was;
    atomic_store(&stacksWanted, 0);
    atomic_store(&stacksTaken, 0);
    memset(stackDepths, 0, sizeof stackDepths);
    atomic_store(&stacksWanted, count < 0 ? 0 : (count > SB_MAX_STACKS ? SB_MAX_STACKS : count));
}

int sb_alloc_backtrace_recorded(void) {
    int taken = atomic_load(&stacksTaken);
    int wanted = atomic_load(&stacksWanted);
    return taken < wanted ? taken : wanted;
}

int sb_alloc_backtrace_frames(int index, void **frames, int capacity) {
    if (index < 0 || index >= sb_alloc_backtrace_recorded()) return 0;
    int depth = stackDepths[index] < capacity ? stackDepths[index] : capacity;
    memcpy(frames, stacks[index], sizeof(void *) * (size_t)depth);
    return depth;
}

void sb_alloc_backtrace_print(int index, int fd) {
    if (index < 0 || index >= sb_alloc_backtrace_recorded()) return;
    backtrace_symbols_fd(stacks[index], stackDepths[index], fd);
}
