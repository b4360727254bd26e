// See include/HeapStats.h.
#define _GNU_SOURCE
#include "HeapStats.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t sb_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

size_t sb_heap_mmapped(void) { return mallinfo2().hblkhd; }

int sb_heap_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

/// The value of `size="…"` after `key` in `from`, or 0.
static size_t sizeAfter(const char *from, const char *end, const char *key) {
    const char *hit = strstr(from, key);
    if (hit == NULL || hit > end) return 0;
    const char *size = strstr(hit, "size=\"");
    if (size == NULL || size > end) return 0;
    return (size_t)strtoull(size + 6, NULL, 10);
}

int sb_heap_arenas_in_use(size_t *inUse, int capacity) {
    char *text = NULL;
    size_t length = 0;
    FILE *stream = open_memstream(&text, &length);
    if (stream == NULL) return -1;
    int status = malloc_info(0, stream);
    fclose(stream);
    if (status != 0 || text == NULL) {
        free(text);
        return -1;
    }
    int count = 0;
    const char *cursor = text;
    while ((cursor = strstr(cursor, "<heap nr=\"")) != NULL) {
        const char *end = strstr(cursor, "</heap>");
        if (end == NULL) break;
        // Each heap: its free chunks (fastbins, then bins incl. the top chunk), then the
        // memory its arena got from the system.
        size_t fast = sizeAfter(cursor, end, "<total type=\"fast\"");
        size_t rest = sizeAfter(cursor, end, "<total type=\"rest\"");
        size_t system = sizeAfter(cursor, end, "<system type=\"current\"");
        if (count < capacity) inUse[count] = system > fast + rest ? system - fast - rest : 0;
        count += 1;
        cursor = end;
    }
    free(text);
    return count;
}
