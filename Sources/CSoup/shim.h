#ifndef SWITCHBOARD_CSOUP_SHIM_H
#define SWITCHBOARD_CSOUP_SHIM_H
// libsoup-3: HTTP server, WebSocket server and client. Everything else about HTTP and
// WebSocket framing is libsoup's; Switchboard never parses either by hand.
#include <glib.h>
#include <gio/gio.h>
#include <libsoup/soup.h>

// g_signal_connect is a macro; Swift sees only g_signal_connect_data.
static inline gulong sb_g_signal_connect(gpointer instance, const gchar *signal,
                                         GCallback handler, gpointer data) {
    return g_signal_connect_data(instance, signal, handler, data, NULL, (GConnectFlags)0);
}
#endif
