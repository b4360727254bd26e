#ifndef SB_CGLIBLOG_H
#define SB_CGLIBLOG_H

#include <stdint.h>

/// Debug and info messages that `g_log` (defined in GLibLog.c, in place of GLib's) dropped
/// before formatting them, because GLib's default handler would have dropped them too.
uint64_t sb_glib_log_dropped(void);

/// Logs `message` through `g_log(domain, level, "%s", message)`: GLib's logging entry point
/// is variadic, which Swift cannot call. `level` is a `GLogLevelFlags` value.
void sb_glib_log_message(const char *domain, int level, const char *message);

#endif
