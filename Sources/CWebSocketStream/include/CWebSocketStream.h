#ifndef SWITCHBOARD_CWEBSOCKETSTREAM_H
#define SWITCHBOARD_CWEBSOCKETSTREAM_H
// A GIOStream over a connected TCP socket for libsoup's server-side WebSocket, whose
// sources carry no poll record: the IO module's ReadyDispatcher polls the socket with its
// own epoll and tells the stream what epoll reported (docs/benchmarks.md, "A stream of our
// own under libsoup's WebSocket").
#include <gio/gio.h>

// epoll(7) event bits, which are also poll(2)'s and GLib's GIOCondition values on Linux.
enum {
    SB_WS_STREAM_IN = 0x001,
    SB_WS_STREAM_OUT = 0x004,
    SB_WS_STREAM_ERR = 0x008,
    SB_WS_STREAM_HUP = 0x010,
};

/// A stream reading and writing `fd`, the socket under `stolen` (the GIOStream
/// `soup_server_message_steal_connection` returned for a plain TCP connection). Bytes
/// `stolen` already holds (read past the HTTP request) are moved into the new stream first.
/// Closing the new stream closes `stolen`, and so the socket. (transfer full)
GIOStream *sb_ws_stream_new(GIOStream *stolen, int fd);

/// The socket, or -1 once the stream is closed.
int sb_ws_stream_fd(GIOStream *stream);

/// The events (SB_WS_STREAM_IN, SB_WS_STREAM_OUT) that the stream's live sources wait for
/// (created and not yet finalized); 0 when there is none or the stream is closed.
unsigned sb_ws_stream_wanted_events(GIOStream *stream);

/// Sets the events epoll reported for the socket in this dispatch round; the stream's
/// sources see them in their check. Clear (0) after the round's dispatch.
void sb_ws_stream_set_ready(GIOStream *stream, unsigned events);

/// recv(2) calls made and recvs saved by the short-read hint, over all streams (tests).
void sb_ws_stream_counters(guint64 *receives, guint64 *skipped);

#endif
