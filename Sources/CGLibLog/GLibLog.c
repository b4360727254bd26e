// `g_log` in place of GLib's, so that debug messages nobody will see are not formatted.
//
// libsoup calls `g_debug` (= `g_log(G_LOG_DOMAIN, G_LOG_LEVEL_DEBUG, ...)`) several times
// per WebSocket frame ("queued … frame", "sent frame", "received … frame of len …"). GLib
// 2.74's `g_logv` formats every message with `g_strdup_vprintf` before its handlers run,
// and only then does the default handler drop a debug message that G_MESSAGES_DEBUG does
// not ask for: ~390 ns per call measured here, 4.7–4.8 % of a shard thread's samples
// (docs/benchmarks.md, "libsoup's debug messages").
//
// This definition interposes GLib's: a symbol defined in the executable precedes the same
// symbol in libglib-2.0.so in every shared object's lookups (ELF symbol resolution order;
// the linker exports it because libsoup and GLib reference it), the same mechanism that
// Tests/Support/CAllocationCounter uses for malloc. A debug or info message is dropped
// here, unformatted, exactly when `g_log_writer_default_would_drop` says GLib's default
// writer would drop it (G_MESSAGES_DEBUG unset or not naming the domain, and
// `g_log_set_debug_enabled` off); everything else goes to GLib's `g_logv` unchanged. The
// differences: a handler installed with `g_log_set_handler` for debug or info messages
// would not see the dropped ones, and G_MESSAGES_DEBUG is read once (setting it from inside
// the running process has no effect; see `messages_debug_unset`). Switchboard installs none (GLib's warnings and criticals
// still reach GLib's handlers).
//
// glib.h is not included: its prototype of `g_log` would be the same function with GLib's
// typedefs (gchar is char, GLogLevelFlags an enum passed as int).
#include "CGLibLog.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>

// GLogLevelFlags (gmessages.h): G_LOG_LEVEL_INFO 1 << 6, G_LOG_LEVEL_DEBUG 1 << 7.
enum { SB_G_LOG_LEVEL_INFO = 1 << 6, SB_G_LOG_LEVEL_DEBUG = 1 << 7 };

extern void g_logv(const char *log_domain, int log_level, const char *format, va_list args);
extern int g_log_writer_default_would_drop(int log_level, const char *log_domain);
extern int g_log_get_debug_enabled(void);

static _Atomic uint64_t dropped;

// Whether G_MESSAGES_DEBUG was unset (or empty) when first looked at. GLib's
// `g_log_writer_default_would_drop` calls getenv for every message, a scan of the whole
// environment: 0.3–1.2 % of a shard thread's perf samples at 1,000 setups/s
// (docs/benchmarks.md "Writers on buffers of their own"). Switchboard never sets the
// variable after start; `g_log_set_debug_enabled` can change the answer at any time, so
// that is still asked every time.
static int messages_debug_unset(void) {
    static _Atomic int state; // 0: not looked at yet, 1: unset or empty, 2: set
    int seen = atomic_load_explicit(&state, memory_order_relaxed);
    if (seen == 0) {
        const char *value = getenv("G_MESSAGES_DEBUG");
        seen = (value == NULL || value[0] == 0) ? 1 : 2;
        atomic_store_explicit(&state, seen, memory_order_relaxed);
    }
    return seen == 1;
}

void g_log(const char *log_domain, int log_level, const char *format, ...) {
    // Only a plain debug or info message: no other level bit, no fatal or recursion flag.
    // With G_MESSAGES_DEBUG unset and debug output not turned on, GLib drops every one of
    // them; otherwise GLib's own test decides (domains named in the variable, "all").
    if ((log_level == SB_G_LOG_LEVEL_DEBUG || log_level == SB_G_LOG_LEVEL_INFO)
        && ((messages_debug_unset() && !g_log_get_debug_enabled())
            || g_log_writer_default_would_drop(log_level, log_domain))) {
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        return;
    }
    va_list args;
    va_start(args, format);
    g_logv(log_domain, log_level, format, args);
    va_end(args);
}

uint64_t sb_glib_log_dropped(void) { return atomic_load_explicit(&dropped, memory_order_relaxed); }

void sb_glib_log_message(const char *domain, int level, const char *message) {
    g_log(domain, level, "%s", message);
}
