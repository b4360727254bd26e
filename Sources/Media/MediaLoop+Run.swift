import Glibc
import ICE

extension MediaLoop {
    /// The loop thread: poll → commands → receive batches → handed-over datagrams (pool
    /// workers) → timers → flush → publish.
    func run() {
        var fds = [pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: inbox?.wakeRead ?? -1, events: Int16(POLLIN), revents: 0)]
        let descriptorCount = nfds_t(inbox == nil ? 2 : 3)
        var now = Self.monotonicMilliseconds()
        var nextICETick = now + Self.iceTickInterval
        var handlerDeadline = onTimer(self, now)
        flushSends()
        publish()
        while true {
            now = Self.monotonicMilliseconds()
            if let requested = requestedTimerDeadline {
                handlerDeadline = min(handlerDeadline ?? requested, requested)
                requestedTimerDeadline = nil
            }
            var deadline = nextICETick
            if let handlerDeadline { deadline = min(deadline, handlerDeadline) }
            let timeout = Int32(max(0, min(deadline - now, Self.maxSleep)))
            fds[0].revents = 0
            fds[1].revents = 0
            fds[2].revents = 0
            _ = poll(&fds, descriptorCount, timeout)
            now = Self.monotonicMilliseconds()
            if fds[1].revents != 0 {
                let (commands, stop) = takeCommands()
                for command in commands { command(self) }
                if stop { break }
            }
            if fds[0].revents != 0 { receiveAvailable(now: now) }
            if fds[2].revents != 0 { drainInbox(now: now) }
            if now >= nextICETick {
                for event in ice.tick(now: now) { onICEEvent(self, event, now) }
                nextICETick = now + Self.iceTickInterval
            }
            if let requested = requestedTimerDeadline {
                handlerDeadline = min(handlerDeadline ?? requested, requested)
                requestedTimerDeadline = nil
            }
            if let deadline = handlerDeadline, now >= deadline { handlerDeadline = onTimer(self, now) }
            flushSends()
            publish()
        }
        flushSends()
        publish()
    }

    /// Drains the socket in batches (bounded per wakeup), flushing replies after each batch
    /// so forwarding latency stays at one batch.
    func receiveAvailable(now: Int64) {
        for _ in 0..<max(1, configuration.maxBatchesPerWakeup) {
            let received = receiveBatch.receive(from: socket)
            if received < 0 {
                stats.receiveErrors &+= 1
                return
            }
            if received == 0 { return }
            for index in 0..<received { demultiplex(index, now: now) }
            flushSends()
            signalHandoffs()
            if received < receiveBatch.capacity { return }
        }
    }
}
