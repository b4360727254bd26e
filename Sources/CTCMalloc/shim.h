#ifndef SWITCHBOARD_CTCMALLOC_SHIM_H
#define SWITCHBOARD_CTCMALLOC_SHIM_H
// gperftools' tcmalloc (Debian libtcmalloc-minimal4) as the server's allocator.
const char *tc_version(int *major, int *minor, const char **patch);
static inline const char *sb_tcmalloc_version(void) { return tc_version(0, 0, 0); }
#endif
