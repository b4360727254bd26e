// A GIOStream over a connected TCP socket, for libsoup's server-side WebSocket
// (docs/benchmarks.md, "A stream of our own under libsoup's WebSocket").
//
// libsoup 3.2's SoupWebsocketConnection reads and writes whatever GIOStream it is given
// through the GPollableInputStream / GPollableOutputStream interfaces. The stream the
// server steals from libsoup after the 101 answer is a SoupIOStream: a SoupFilterInputStream
// over a GSocketInputStream over a GSocket. With it, every read round of a connection
//
//   - destroys and re-creates the input source, which is three nested GSources (the filter
//     stream's pollable source, the socket stream's pollable source, the GSocket source),
//     and GLib 2.74 writes the context's wake-up eventfd on every poll record added or
//     removed (g_main_context_add_poll_unlocked / remove_poll_unlocked) although nothing
//     polls that fd here (ContextCell);
//   - reads 1,024 bytes per recv(2) (READ_BUFFER_SIZE in soup-websocket-connection.c) until
//     one fails with EAGAIN, each failure a GError with a formatted message, and each
//     success a "read-data" signal emission on the filter stream.
//
// This stream keeps libsoup's framing and replaces only what is under it:
//
//   - its sources have no poll record. The IO module's ReadyDispatcher already polls the
//     connections' sockets with its own epoll; it asks the stream which events its attached
//     sources wait for (sb_ws_stream_wanted_events) when it re-registers the socket, and
//     hands over what epoll reported (sb_ws_stream_set_ready) before the context's check.
//     Creating or destroying a source touches no fd;
//   - one recv of up to READ_CHUNK bytes serves libsoup's 1,024-byte reads from memory, and
//     a recv that returned less than it asked for means the socket's receive queue was
//     empty, so the next read answers "would block" without a system call. Bytes that
//     arrive in between are not lost: the epoll registration is level-triggered, so the
//     socket is reported again and the next round reads them;
//   - writes are one send(2) each, MSG_NOSIGNAL as GSocket does.
//
// Thread: a stream and its sources are used on one thread (the loop thread of the shard
// that owns the connection), like the libsoup connection on top of it.
// The casts below (SB_WS_STREAM() and the like) compile to plain pointer casts: the cell
// calls sb_ws_stream_* several times per connection and dispatch round, and a checked cast
// is a call into GObject each time. Every pointer reaching them is a stream made here.
#define G_DISABLE_CAST_CHECKS
#include "CWebSocketStream.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

// 16 KiB: one recv holds a call setup's largest frames (the ~3–4 KB SDP offer and answer)
// several times over, so a burst from one device is drained in one system call, while an
// idle connection holds no buffer at all (it is freed once libsoup has read it empty).
#define READ_CHUNK 16384

static guint64 total_receives;
static guint64 total_skipped;

void sb_ws_stream_counters(guint64 *receives, guint64 *skipped) {
    *receives = __atomic_load_n(&total_receives, __ATOMIC_RELAXED);
    *skipped = __atomic_load_n(&total_skipped, __ATOMIC_RELAXED);
}

// State shared by the GIOStream, its two streams and their sources (reference counted,
// because libsoup may hold a stream or a source a little longer than the GIOStream).
typedef struct {
    int fd;
    // Received bytes not yet handed to libsoup: buf[start ..< end]; NULL when empty.
    guint8 *buf;
    gsize start, end, capacity;
    // The last recv returned less than it asked for: the queue was empty then.
    gboolean drained;
    // epoll events of the dispatch round under way (sb_ws_stream_set_ready).
    unsigned ready;
    // Sources created on the input and on the output stream and not yet finalized.
    // libsoup destroys and drops a source together, and GLib lets go of one it dispatched
    // when the dispatch returns, so by the time the cell asks (after the round) a
    // destroyed source is also finalized. Counting in create and finalize keeps the
    // question a field read.
    unsigned readers, writers;
} Shared;

static Shared *shared_new(int fd) {
    Shared *shared = g_rc_box_new0(Shared);
    shared->fd = fd;
    return shared;
}

static void shared_clear(gpointer data) {
    Shared *shared = data;
    g_free(shared->buf);
}

static void shared_release(Shared *shared) { g_rc_box_release_full(shared, shared_clear); }

static void shared_drop_buffer(Shared *shared) {
    g_free(shared->buf);
    shared->buf = NULL;
    shared->start = shared->end = shared->capacity = 0;
}

static gssize shared_take(Shared *shared, void *buffer, gsize count) {
    gsize n = MIN(count, shared->end - shared->start);
    memcpy(buffer, shared->buf + shared->start, n);
    shared->start += n;
    if (shared->start == shared->end) shared_drop_buffer(shared);
    return (gssize)n;
}

static void set_would_block(GError **error) {
    g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, "Operation would block");
}

static void set_errno_error(GError **error, int code, const char *what) {
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(code), "%s: %s", what, g_strerror(code));
}

static void set_closed(GError **error) {
    g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CLOSED, "Stream is already closed");
}

static gssize shared_read_nonblocking(Shared *shared, void *buffer, gsize count, GError **error) {
    if (shared->end > shared->start) return shared_take(shared, buffer, count);
    if (shared->fd < 0) {
        set_closed(error);
        return -1;
    }
    if (shared->drained) {
        shared->drained = FALSE;
        __atomic_fetch_add(&total_skipped, 1, __ATOMIC_RELAXED);
        set_would_block(error);
        return -1;
    }
    if (shared->buf == NULL) {
        shared->buf = g_malloc(READ_CHUNK);
        shared->capacity = READ_CHUNK;
    }
    ssize_t n;
    do {
        n = recv(shared->fd, shared->buf, shared->capacity, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    __atomic_fetch_add(&total_receives, 1, __ATOMIC_RELAXED);
    if (n <= 0) {
        int code = errno;
        shared_drop_buffer(shared);
        if (n == 0) return 0;
        if (code == EAGAIN || code == EWOULDBLOCK) {
            set_would_block(error);
        } else {
            set_errno_error(error, code, "Error receiving data");
        }
        return -1;
    }
    if ((gsize)n < shared->capacity) shared->drained = TRUE;
    shared->start = 0;
    shared->end = (gsize)n;
    return shared_take(shared, buffer, count);
}

static gssize shared_write_nonblocking(Shared *shared, void *buffer, gsize count, GError **error) {
    if (shared->fd < 0) {
        set_closed(error);
        return -1;
    }
    ssize_t n;
    do {
        n = send(shared->fd, buffer, count, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            set_would_block(error);
        } else {
            set_errno_error(error, errno, "Error sending data");
        }
        return -1;
    }
    return (gssize)n;
}

// Blocks until `events` (POLLIN or POLLOUT) or an error on the socket. Only the blocking
// read/write entry points use it; libsoup's WebSocket never calls them.
static gboolean shared_wait(Shared *shared, short events, GCancellable *cancellable, GError **error) {
    if (shared->fd < 0) {
        set_closed(error);
        return FALSE;
    }
    GPollFD fds[2] = {{.fd = shared->fd, .events = events}};
    int count = 1;
    if (g_cancellable_make_pollfd(cancellable, &fds[1])) count = 2;
    int r;
    do {
        r = g_poll(fds, count, -1);
    } while (r < 0 && errno == EINTR);
    if (count == 2) g_cancellable_release_fd(cancellable);
    if (g_cancellable_set_error_if_cancelled(cancellable, error)) return FALSE;
    if (r < 0) {
        set_errno_error(error, errno, "Error waiting for the socket");
        return FALSE;
    }
    return TRUE;
}

// is_readable / is_writable: whether `events` (POLLIN or POLLOUT) holds now, without
// waiting; a closed stream answers yes, so that the caller's next operation reports it.
static gboolean shared_ready_now(Shared *shared, short events) {
    if (shared->fd < 0) return TRUE;
    struct pollfd p = {.fd = shared->fd, .events = events};
    return poll(&p, 1, 0) > 0;
}

typedef gssize (*NonblockingOp)(Shared *shared, void *buffer, gsize count, GError **error);

// A blocking read or write (GInputStream read_fn, GOutputStream write_fn): the non-blocking
// operation, and while it would block, a wait for `events`.
static gssize shared_blocking(Shared *shared, NonblockingOp op, void *buffer, gsize count, short events,
                              GCancellable *cancellable, GError **error) {
    for (;;) {
        GError *local = NULL;
        gssize n = op(shared, buffer, count, &local);
        if (n >= 0) return n;
        if (!g_error_matches(local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
            g_propagate_error(error, local);
            return -1;
        }
        g_error_free(local);
        if (!shared_wait(shared, events, cancellable, error)) return -1;
    }
}

// MARK: - Sources

typedef struct {
    GSource source;
    Shared *shared;
    GObject *stream;
    unsigned condition;
} StreamSource;

static gboolean stream_source_ready(StreamSource *source) {
    Shared *shared = source->shared;
    if ((source->condition & SB_WS_STREAM_IN) && shared->end > shared->start) return TRUE;
    // Closed: libsoup stops its sources before it closes the stream; one left attached
    // stays quiet rather than report ready on every round.
    if (shared->fd < 0) return FALSE;
    return (shared->ready & (source->condition | SB_WS_STREAM_ERR | SB_WS_STREAM_HUP)) != 0;
}

static gboolean stream_source_prepare(GSource *source, gint *timeout) {
    *timeout = -1;
    return stream_source_ready((StreamSource *)source);
}

static gboolean stream_source_check(GSource *source) { return stream_source_ready((StreamSource *)source); }

static gboolean stream_source_dispatch(GSource *source, GSourceFunc callback, gpointer user_data) {
    if (callback == NULL) return G_SOURCE_REMOVE;
    GPollableSourceFunc func = (GPollableSourceFunc)(void *)callback;
    return func(((StreamSource *)source)->stream, user_data);
}

static void stream_source_finalize(GSource *source) {
    StreamSource *self = (StreamSource *)source;
    if (self->condition == SB_WS_STREAM_IN) {
        self->shared->readers--;
    } else {
        self->shared->writers--;
    }
    g_object_unref(self->stream);
    shared_release(self->shared);
}

static GSourceFuncs stream_source_funcs = {
    .prepare = stream_source_prepare,
    .check = stream_source_check,
    .dispatch = stream_source_dispatch,
    .finalize = stream_source_finalize,
};

static GSource *stream_source_new(Shared *shared, GObject *stream, unsigned condition, GCancellable *cancellable) {
    GSource *source = g_source_new(&stream_source_funcs, sizeof(StreamSource));
    StreamSource *self = (StreamSource *)source;
    self->shared = g_rc_box_acquire(shared);
    self->stream = g_object_ref(stream);
    self->condition = condition;
    if (condition == SB_WS_STREAM_IN) {
        shared->readers++;
    } else {
        shared->writers++;
    }
    if (cancellable != NULL) {
        // Fires when cancelled (through the cancellable's own wake-up, not a poll record of ours).
        GSource *cancel = g_cancellable_source_new(cancellable);
        g_source_set_dummy_callback(cancel);
        g_source_add_child_source(source, cancel);
        g_source_unref(cancel);
    }
    return source;
}

// MARK: - Input stream

G_DECLARE_FINAL_TYPE(SbWsInput, sb_ws_input, SB, WS_INPUT, GInputStream)
struct _SbWsInput {
    GInputStream parent;
    Shared *shared;
};

static void sb_ws_input_pollable_init(GPollableInputStreamInterface *iface);
G_DEFINE_TYPE_WITH_CODE(SbWsInput, sb_ws_input, G_TYPE_INPUT_STREAM,
                        G_IMPLEMENT_INTERFACE(G_TYPE_POLLABLE_INPUT_STREAM, sb_ws_input_pollable_init))

static gssize sb_ws_input_read(GInputStream *stream, void *buffer, gsize count, GCancellable *cancellable,
                               GError **error) {
    return shared_blocking(SB_WS_INPUT(stream)->shared, shared_read_nonblocking, buffer, count, G_IO_IN, cancellable,
                           error);
}

// The GIOStream closes the socket; closing one direction only marks it closed.
static gboolean sb_ws_input_close(GInputStream *stream, GCancellable *cancellable, GError **error) {
    (void)stream; (void)cancellable; (void)error;
    return TRUE;
}

static void sb_ws_input_finalize(GObject *object) {
    shared_release(SB_WS_INPUT(object)->shared);
    G_OBJECT_CLASS(sb_ws_input_parent_class)->finalize(object);
}

static void sb_ws_input_class_init(SbWsInputClass *klass) {
    G_OBJECT_CLASS(klass)->finalize = sb_ws_input_finalize;
    G_INPUT_STREAM_CLASS(klass)->read_fn = sb_ws_input_read;
    G_INPUT_STREAM_CLASS(klass)->close_fn = sb_ws_input_close;
}

static void sb_ws_input_init(SbWsInput *self) { (void)self; }

static gboolean sb_ws_input_can_poll(GPollableInputStream *stream) { (void)stream; return TRUE; }

static gboolean sb_ws_input_is_readable(GPollableInputStream *stream) {
    Shared *shared = SB_WS_INPUT(stream)->shared;
    return shared->end > shared->start || shared_ready_now(shared, POLLIN);
}

static GSource *sb_ws_input_create_source(GPollableInputStream *stream, GCancellable *cancellable) {
    Shared *shared = SB_WS_INPUT(stream)->shared;
    // A new source means a new read round will follow a readiness report: a hint left by a
    // round libsoup ended early must not answer that round's first read.
    shared->drained = FALSE;
    return stream_source_new(shared, G_OBJECT(stream), SB_WS_STREAM_IN, cancellable);
}

static gssize sb_ws_input_read_nonblocking(GPollableInputStream *stream, void *buffer, gsize count,
                                           GError **error) {
    return shared_read_nonblocking(SB_WS_INPUT(stream)->shared, buffer, count, error);
}

static void sb_ws_input_pollable_init(GPollableInputStreamInterface *iface) {
    iface->can_poll = sb_ws_input_can_poll;
    iface->is_readable = sb_ws_input_is_readable;
    iface->create_source = sb_ws_input_create_source;
    iface->read_nonblocking = sb_ws_input_read_nonblocking;
}

// MARK: - Output stream

G_DECLARE_FINAL_TYPE(SbWsOutput, sb_ws_output, SB, WS_OUTPUT, GOutputStream)
struct _SbWsOutput {
    GOutputStream parent;
    Shared *shared;
};

static void sb_ws_output_pollable_init(GPollableOutputStreamInterface *iface);
G_DEFINE_TYPE_WITH_CODE(SbWsOutput, sb_ws_output, G_TYPE_OUTPUT_STREAM,
                        G_IMPLEMENT_INTERFACE(G_TYPE_POLLABLE_OUTPUT_STREAM, sb_ws_output_pollable_init))

static gssize sb_ws_output_write(GOutputStream *stream, const void *buffer, gsize count, GCancellable *cancellable,
                                 GError **error) {
    // The write operation only reads the buffer; the cast lets both directions share one loop.
    return shared_blocking(SB_WS_OUTPUT(stream)->shared, shared_write_nonblocking, (void *)buffer, count, G_IO_OUT,
                           cancellable, error);
}

static gboolean sb_ws_output_close(GOutputStream *stream, GCancellable *cancellable, GError **error) {
    (void)stream; (void)cancellable; (void)error;
    return TRUE;
}

static void sb_ws_output_finalize(GObject *object) {
    shared_release(SB_WS_OUTPUT(object)->shared);
    G_OBJECT_CLASS(sb_ws_output_parent_class)->finalize(object);
}

static void sb_ws_output_class_init(SbWsOutputClass *klass) {
    G_OBJECT_CLASS(klass)->finalize = sb_ws_output_finalize;
    G_OUTPUT_STREAM_CLASS(klass)->write_fn = sb_ws_output_write;
    G_OUTPUT_STREAM_CLASS(klass)->close_fn = sb_ws_output_close;
}

static void sb_ws_output_init(SbWsOutput *self) { (void)self; }

static gboolean sb_ws_output_can_poll(GPollableOutputStream *stream) { (void)stream; return TRUE; }

static gboolean sb_ws_output_is_writable(GPollableOutputStream *stream) {
    return shared_ready_now(SB_WS_OUTPUT(stream)->shared, POLLOUT);
}

static GSource *sb_ws_output_create_source(GPollableOutputStream *stream, GCancellable *cancellable) {
    return stream_source_new(SB_WS_OUTPUT(stream)->shared, G_OBJECT(stream), SB_WS_STREAM_OUT, cancellable);
}

static gssize sb_ws_output_write_nonblocking(GPollableOutputStream *stream, const void *buffer, gsize count,
                                             GError **error) {
    return shared_write_nonblocking(SB_WS_OUTPUT(stream)->shared, (void *)buffer, count, error);
}

static void sb_ws_output_pollable_init(GPollableOutputStreamInterface *iface) {
    iface->can_poll = sb_ws_output_can_poll;
    iface->is_writable = sb_ws_output_is_writable;
    iface->create_source = sb_ws_output_create_source;
    iface->write_nonblocking = sb_ws_output_write_nonblocking;
}

// MARK: - The GIOStream

G_DECLARE_FINAL_TYPE(SbWsStream, sb_ws_stream, SB, WS_STREAM, GIOStream)
struct _SbWsStream {
    GIOStream parent;
    // The stolen stream: owns the GSocket, which closing it closes.
    GIOStream *stolen;
    SbWsInput *input;
    SbWsOutput *output;
    Shared *shared;
};

G_DEFINE_TYPE(SbWsStream, sb_ws_stream, G_TYPE_IO_STREAM)

static GInputStream *sb_ws_stream_get_input_stream(GIOStream *stream) {
    return G_INPUT_STREAM(SB_WS_STREAM(stream)->input);
}

static GOutputStream *sb_ws_stream_get_output_stream(GIOStream *stream) {
    return G_OUTPUT_STREAM(SB_WS_STREAM(stream)->output);
}

static gboolean sb_ws_stream_close(GIOStream *stream, GCancellable *cancellable, GError **error) {
    SbWsStream *self = SB_WS_STREAM(stream);
    g_output_stream_close(G_OUTPUT_STREAM(self->output), NULL, NULL);
    g_input_stream_close(G_INPUT_STREAM(self->input), NULL, NULL);
    self->shared->fd = -1;
    self->shared->drained = FALSE;
    shared_drop_buffer(self->shared);
    return g_io_stream_close(self->stolen, cancellable, error);
}

// Closing a socket does not block: close here and complete in the caller's context, as
// GSocketConnection does (GIOStream's default would run the close on a worker thread).
static void sb_ws_stream_close_async(GIOStream *stream, int priority, GCancellable *cancellable,
                                     GAsyncReadyCallback callback, gpointer user_data) {
    GTask *task = g_task_new(stream, cancellable, callback, user_data);
    g_task_set_priority(task, priority);
    GError *error = NULL;
    if (sb_ws_stream_close(stream, cancellable, &error)) {
        g_task_return_boolean(task, TRUE);
    } else {
        g_task_return_error(task, error);
    }
    g_object_unref(task);
}

static gboolean sb_ws_stream_close_finish(GIOStream *stream, GAsyncResult *result, GError **error) {
    (void)stream;
    return g_task_propagate_boolean(G_TASK(result), error);
}

// GIOStream's own dispose closes a stream left open (through close_fn).
static void sb_ws_stream_finalize(GObject *object) {
    SbWsStream *self = SB_WS_STREAM(object);
    g_clear_object(&self->input);
    g_clear_object(&self->output);
    g_clear_object(&self->stolen);
    shared_release(self->shared);
    G_OBJECT_CLASS(sb_ws_stream_parent_class)->finalize(object);
}

static void sb_ws_stream_class_init(SbWsStreamClass *klass) {
    G_OBJECT_CLASS(klass)->finalize = sb_ws_stream_finalize;
    GIOStreamClass *io = G_IO_STREAM_CLASS(klass);
    io->get_input_stream = sb_ws_stream_get_input_stream;
    io->get_output_stream = sb_ws_stream_get_output_stream;
    io->close_fn = sb_ws_stream_close;
    io->close_async = sb_ws_stream_close_async;
    io->close_finish = sb_ws_stream_close_finish;
}

static void sb_ws_stream_init(SbWsStream *self) { (void)self; }

// Moves what `stolen` has already read from the socket (bytes the client sent right behind
// its upgrade request) into `shared`, reading until the stolen stream would block: then
// its own buffer is empty, and everything after comes from the socket.
static void take_buffered(Shared *shared, GIOStream *stolen) {
    GInputStream *input = g_io_stream_get_input_stream(stolen);
    if (!G_IS_POLLABLE_INPUT_STREAM(input)) return;
    guint8 chunk[4096];
    for (;;) {
        GError *error = NULL;
        gssize n = g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(input), chunk, sizeof chunk,
                                                            NULL, &error);
        if (n <= 0) {
            // Would block, end of stream or an error: the socket says the same to the next recv.
            g_clear_error(&error);
            return;
        }
        gsize needed = shared->end + (gsize)n;
        if (needed > shared->capacity) {
            shared->capacity = MAX(needed, (gsize)READ_CHUNK);
            shared->buf = g_realloc(shared->buf, shared->capacity);
        }
        memcpy(shared->buf + shared->end, chunk, (gsize)n);
        shared->end = needed;
    }
}

GIOStream *sb_ws_stream_new(GIOStream *stolen, int fd) {
    SbWsStream *self = g_object_new(sb_ws_stream_get_type(), NULL);
    self->stolen = g_object_ref(stolen);
    self->shared = shared_new(fd);
    self->input = g_object_new(sb_ws_input_get_type(), NULL);
    self->input->shared = g_rc_box_acquire(self->shared);
    self->output = g_object_new(sb_ws_output_get_type(), NULL);
    self->output->shared = g_rc_box_acquire(self->shared);
    take_buffered(self->shared, stolen);
    return G_IO_STREAM(self);
}

static Shared *shared_of(GIOStream *stream) {
    return SB_WS_STREAM(stream)->shared;
}

int sb_ws_stream_fd(GIOStream *stream) { return shared_of(stream)->fd; }

unsigned sb_ws_stream_wanted_events(GIOStream *stream) {
    Shared *shared = shared_of(stream);
    if (shared->fd < 0) return 0;
    return (shared->readers > 0 ? SB_WS_STREAM_IN : 0) | (shared->writers > 0 ? SB_WS_STREAM_OUT : 0);
}

void sb_ws_stream_set_ready(GIOStream *stream, unsigned events) { shared_of(stream)->ready = events; }
