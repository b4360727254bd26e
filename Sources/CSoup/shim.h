#ifndef SWITCHBOARD_CSOUP_SHIM_H
#define SWITCHBOARD_CSOUP_SHIM_H
// libsoup-3: HTTP server, WebSocket server and client. Everything else about HTTP and
// WebSocket framing is libsoup's; Switchboard never parses either by hand.
#include <glib.h>
#include <gio/gio.h>
#include <libsoup/soup.h>
#include <glib-unix.h>

// g_signal_connect is a macro; Swift sees only g_signal_connect_data.
static inline gulong sb_g_signal_connect(gpointer instance, const gchar *signal,
                                         GCallback handler, gpointer data) {
    return g_signal_connect_data(instance, signal, handler, data, NULL, (GConnectFlags)0);
}

// g_signal_connect_data with a destroy notify: the Swift side retains its user_data and the
// notify releases it when the handler is disconnected or the instance is finalized.
static inline gulong sb_g_signal_connect_full(gpointer instance, const gchar *signal,
                                              GCallback handler, gpointer data,
                                              GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags)0);
}

// soup_server_new is variadic; Swift cannot call it. `server_header` may be NULL.
static inline SoupServer *sb_soup_server_new(const char *server_header) {
    if (server_header == NULL) return soup_server_new(NULL, NULL);
    return soup_server_new("server-header", server_header, NULL);
}

// soup_session_new_with_options is variadic. libsoup 3 defaults to max-conns 10 and
// max-conns-per-host 2, which serialises WebSocket handshakes; callers pass larger limits.
static inline SoupSession *sb_soup_session_new(guint max_conns, guint max_conns_per_host,
                                               guint timeout_seconds) {
    return soup_session_new_with_options("max-conns", max_conns,
                                         "max-conns-per-host", max_conns_per_host,
                                         "timeout", timeout_seconds,
                                         NULL);
}

// GSourceFunc return values are macros in GLib.
static inline gboolean sb_g_source_remove_value(void) { return G_SOURCE_REMOVE; }
#endif
