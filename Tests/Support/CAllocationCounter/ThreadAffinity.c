#define _GNU_SOURCE
#include "ThreadAffinity.h"

#include <errno.h>
#include <sched.h>
#include <unistd.h>

int sb_pin_this_thread_to_cpu(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return EINVAL;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    // pid 0 = the calling thread (sched_setaffinity is per thread on Linux).
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
}

int sb_unpin_this_thread(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
}

int sb_current_cpu(void) { return sched_getcpu(); }

int sb_allowed_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int count = CPU_COUNT(&set);
    return count > 0 ? count : 1;
}

int sb_current_tid(void) { return (int)gettid(); }
