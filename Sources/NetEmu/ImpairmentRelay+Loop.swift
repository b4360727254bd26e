import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension ImpairmentRelay {
    /// 64: datagrams read per socket per wake-up, so one busy direction can not starve the
    /// other or the timer heap.
    static let readBatch = 64
    /// 65,535: the largest UDP payload.
    static let bufferSize = 65_535

    /// The relay thread: poll(2) on the wake pipe, the listening socket and every upstream
    /// socket, with the timeout set by the earliest delayed datagram.
    func run() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
        defer {
            buffer.deallocate()
            lock.lock()
            state = .stopped
            let unserved = rebindRequests
            rebindRequests.removeAll()
            lock.unlock()
            for request in unserved { request.finish(.failure(.notRunning)) }
            stopped.signal()
        }
        var pollSet: [pollfd] = []
        var pollSetVersion = UInt64.max
        while true {
            lock.lock()
            let stopping = state != .running
            let rebinds = rebindRequests
            rebindRequests.removeAll()
            lock.unlock()
            if stopping {
                for request in rebinds { request.finish(.failure(.notRunning)) }
                return
            }
            for request in rebinds { request.finish(rebindNow(clientPort: request.clientPort)) }

            flushDue(monotonicNanoseconds())
            if pollSetVersion != socketsVersion {
                pollSet = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0), pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)]
                pollSet += clientByFD.keys.sorted().map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                pollSetVersion = socketsVersion
            }
            var timeout: Int32 = -1
            if let next = delayQueue.next {
                let now = monotonicNanoseconds()
                // Round up to whole ms: poll(2) has ms resolution; never wake early and spin.
                timeout = next <= now ? 0 : Int32(min((next - now + 999_999) / 1_000_000, 60_000))
            }
            let ready = poll(&pollSet, nfds_t(pollSet.count), timeout)
            if ready < 0 && errno != EINTR { return }
            guard ready > 0 else { continue }
            for entry in pollSet where entry.revents != 0 {
                if entry.fd == wakeRead {
                    var drain = [UInt8](repeating: 0, count: 64)
                    _ = read(wakeRead, &drain, drain.count)
                } else if entry.fd == listenFD {
                    readUplink(buffer)
                } else if let client = clientByFD[entry.fd] {
                    readDownlink(fd: entry.fd, client: client, buffer)
                }
            }
        }
    }

    private func readUplink(_ buffer: UnsafeMutableRawBufferPointer) {
        for _ in 0..<Self.readBatch {
            guard let (count, from) = UDPSocket.receive(listenFD, into: buffer) else { return }
            let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            let key = UInt64(from.sin_addr.s_addr) << 16 | UInt64(from.sin_port)
            let fd = mappingsByClient[key]?.fd ?? makeMapping(key: key, client: from)
            handle(.uplink, bytes, clientPort: UInt16(bigEndian: from.sin_port), sendFD: fd, destination: target)
        }
    }

    private func readDownlink(fd: Int32, client: sockaddr_in, _ buffer: UnsafeMutableRawBufferPointer) {
        for _ in 0..<Self.readBatch {
            guard let (count, _) = UDPSocket.receive(fd, into: buffer) else { return }
            let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            handle(.downlink, bytes, clientPort: UInt16(bigEndian: client.sin_port), sendFD: listenFD, destination: client)
        }
    }

    /// A new NAT binding: one upstream socket on the listen address, any free port.
    private func makeMapping(key: UInt64, client: sockaddr_in) -> Int32? {
        guard mappingsByClient.count < limits.maxMappings else { return nil }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr = target.sin_addr
        guard let fd = try? UDPSocket.bound(to: local) else { return nil }
        mappingsByClient[key] = (fd, client)
        clientByFD[fd] = client
        socketsVersion &+= 1
        lock.lock()
        mappingList.append(Mapping(clientPort: UInt16(bigEndian: client.sin_port), upstreamPort: UDPSocket.localPort(fd)))
        lock.unlock()
        return fd
    }

    /// Decides, logs and either sends now, schedules or drops one datagram.
    private func handle(_ direction: Direction, _ bytes: [UInt8], clientPort: UInt16, sendFD: Int32?, destination: sockaddr_in) {
        let now = monotonicNanoseconds()
        lock.lock()
        let index = arrivals[direction.rawValue]
        arrivals[direction.rawValue] += 1
        counterState[direction].received += 1
        counterState[direction].receivedBytes += UInt64(bytes.count)
        let action: RelayAction
        var deliverAt: UInt64 = 0
        if sendFD == nil {
            action = .dropped(.noMapping)
        } else if delayQueue.count >= limits.maxDelayedPackets || delayQueue.bytes + bytes.count > limits.maxDelayedBytes {
            action = .dropped(.relayBacklog)
        } else if pipelines[direction.rawValue].impairment.mediaOnly, !(128...191).contains(bytes.first ?? 0) {
            action = .forwarded
        } else {
            switch pipelines[direction.rawValue].admit(size: bytes.count, now: now) {
            case .drop(let reason):
                action = .dropped(reason)
            case .deliver(let at, let overtakes):
                deliverAt = at
                let ms = Double(at &- now) / 1e6
                action = at <= now ? .forwarded : overtakes ? .reordered(ms: ms) : .delayed(ms: ms)
            }
        }
        counterState[direction].count(action)
        logRing.append(RelayLogEntry(index: index, direction: direction, clientPort: clientPort, size: bytes.count,
                                     arrivalNs: now - createdAtNs, action: action, rtp: RTPTag(datagram: bytes)))
        lock.unlock()

        guard let fd = sendFD, !action.isDropped else { return }
        if case .forwarded = action {
            send(direction, fd: fd, bytes, to: destination)
        } else {
            sequence += 1
            delayQueue.push(DelayedDatagram(deliverAt: deliverAt, sequence: sequence, direction: direction, fd: fd, destination: destination, bytes: bytes))
        }
    }

    /// Sends every delayed datagram whose time has come, in (time, arrival) order.
    private func flushDue(_ now: UInt64) {
        while let item = delayQueue.popDue(now) {
            send(item.direction, fd: item.fd, item.bytes, to: item.destination)
        }
    }

    private func send(_ direction: Direction, fd: Int32, _ bytes: [UInt8], to destination: sockaddr_in) {
        let ok = UDPSocket.send(fd, bytes, to: destination)
        lock.lock()
        if ok {
            counterState[direction].sent += 1
            counterState[direction].sentBytes += UInt64(bytes.count)
        } else {
            counterState[direction].sendErrors += 1
        }
        lock.unlock()
    }
}
