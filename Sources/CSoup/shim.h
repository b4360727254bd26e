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

// A handler of a (gint, boxed) signal such as SoupWebsocketConnection::message, called
// without libffi. libsoup declares "message" with g_cclosure_marshal_generic, which builds
// an ffi call for every emission (~1.3 % of a shard thread's perf samples at 1,000 setups/s,
// docs/benchmarks.md "Writers on buffers of their own"); a closure that carries its own marshal
// keeps it (g_signal_connect_closure_by_id only sets the class marshaller on closures
// without one). The handler gets what a g_signal_connect handler gets: instance, the two
// parameters, user data.
typedef void (*SBIntBoxedHandler)(gpointer instance, gint value, gpointer boxed, gpointer data);

static void sb_marshal_VOID__INT_BOXED(GClosure *closure, GValue *return_value, guint n_param_values,
                                       const GValue *param_values, gpointer invocation_hint,
                                       gpointer marshal_data) {
    (void)return_value; (void)invocation_hint;
    g_return_if_fail(n_param_values == 3);
    SBIntBoxedHandler handler = (SBIntBoxedHandler)(marshal_data ? marshal_data : ((GCClosure *)closure)->callback);
    handler(g_value_peek_pointer(param_values + 0), g_value_get_int(param_values + 1),
            g_value_get_boxed(param_values + 2), closure->data);
}

// Connects `handler` to a signal whose parameters are (gint, a boxed type) through
// sb_marshal_VOID__INT_BOXED. Returns 0, connecting nothing, when the signal's parameters
// are not that (g_signal_query), so a libsoup that changed them fails loudly, not by
// misreading arguments.
static inline gulong sb_g_signal_connect_int_boxed(gpointer instance, const gchar *signal,
                                                   GCallback handler, gpointer data) {
    guint id = g_signal_lookup(signal, G_TYPE_FROM_INSTANCE(instance));
    if (id == 0) return 0;
    GSignalQuery query;
    g_signal_query(id, &query);
    if (query.n_params != 2 || (query.param_types[0] & ~G_SIGNAL_TYPE_STATIC_SCOPE) != G_TYPE_INT
        || !G_TYPE_IS_BOXED(query.param_types[1] & ~G_SIGNAL_TYPE_STATIC_SCOPE)
        || query.return_type != G_TYPE_NONE) {
        return 0;
    }
    GClosure *closure = g_cclosure_new(handler, data, NULL);
    g_closure_set_marshal(closure, sb_marshal_VOID__INT_BOXED);
    return g_signal_connect_closure_by_id(instance, id, 0, closure, FALSE);
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
// epoll(7) for the O(ready) WebSocket dispatcher (Sources/IO/ReadyDispatcher.swift): one
// epoll instance per loop watches every WebSocket's socket. struct epoll_event is packed on
// x86-64, so Swift gets plain (events, data) arrays instead.
#include <sys/epoll.h>
#include <errno.h>
static inline int sb_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
// op: 0 add, 1 modify, 2 delete. Returns 0 or errno.
static inline int sb_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    int cmd = op == 0 ? EPOLL_CTL_ADD : (op == 1 ? EPOLL_CTL_MOD : EPOLL_CTL_DEL);
    return epoll_ctl(epfd, cmd, fd, &ev) == 0 ? 0 : errno;
}
#define SB_EPOLL_BATCH 256
// Non-blocking epoll_wait; at most SB_EPOLL_BATCH events into the two arrays.
static inline int sb_epoll_poll(int epfd, uint32_t *events, uint64_t *data, int max) {
    struct epoll_event evs[SB_EPOLL_BATCH];
    if (max > SB_EPOLL_BATCH) max = SB_EPOLL_BATCH;
    int n = epoll_wait(epfd, evs, max, 0);
    for (int i = 0; i < n; i++) { events[i] = evs[i].events; data[i] = evs[i].data.u64; }
    return n;
}
// GSourceFunc return value for sources that stay attached.
static inline gboolean sb_g_source_continue_value(void) { return G_SOURCE_CONTINUE; }
// The calling thread's kernel name (prctl(2) PR_SET_NAME / PR_GET_NAME; what top, perf and
// /proc/self/task/*/comm show). prctl is variadic, so not callable from Swift. The kernel
// keeps at most 15 bytes; `buffer` of PR_GET_NAME must hold 16.
#include <sys/prctl.h>
static inline int sb_set_thread_name(const char *name) { return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); }
static inline int sb_get_thread_name(char buffer[16]) { return prctl(PR_GET_NAME, (unsigned long)buffer, 0, 0, 0); }
#endif
