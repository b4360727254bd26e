#if canImport(Glibc)
import Glibc
#endif

/// A pipe(2) whose read end a loop polls to be woken from another thread (`MediaLoop`'s
/// wake-up and `MediaLoopInbox`'s hand-off signal): both ends non-blocking (a full pipe
/// already means "wake up") and close-on-exec.
enum WakePipe {
    static func make() throws(UDPSocketError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .socketFailed(errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return (fds[0], fds[1])
    }
}
