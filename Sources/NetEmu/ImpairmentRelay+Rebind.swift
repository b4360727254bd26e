import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// NAT rebinding: the client keeps sending to the relay as before, but the target sees it
/// from a new source port (as after a NAT binding timeout and re-creation, or a device moving
/// from Wi-Fi to cellular behind the same relay). The old upstream socket is closed, so
/// anything the target still sends to the old 5-tuple is lost (ICMP port unreachable), until
/// it follows the new one (for ICE: after the next authenticated check from it, RFC 8445
/// §7.3.1.4 / RFC 7675 consent checks).
extension ImpairmentRelay {
    /// One rebind waiting for the relay thread.
    final class RebindRequest: @unchecked Sendable {
        let clientPort: UInt16
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<Mapping, NetEmuError> = .failure(.timedOut)
        private let lock = NSLock()

        init(clientPort: UInt16) { self.clientPort = clientPort }

        func finish(_ result: Result<Mapping, NetEmuError>) {
            lock.lock()
            self.result = result
            lock.unlock()
            done.signal()
        }

        func wait(timeout: TimeInterval) -> Result<Mapping, NetEmuError> {
            guard done.wait(timeout: .now() + timeout) == .success else { return .failure(.timedOut) }
            lock.lock()
            defer { lock.unlock() }
            return result
        }
    }

    /// 5 s: the relay thread wakes within a poll(2) round (ms); only a wedged thread takes longer.
    public static let rebindTimeout: TimeInterval = 5

    /// Replaces the upstream socket of the client on `clientPort` (127.0.0.1) with a new one on
    /// a new source port, and returns the new binding. Datagrams still delayed for that client
    /// leave through the new socket. The client side is untouched: it keeps talking to `port`.
    /// Throws `noMapping` when the client has sent nothing yet, `notRunning` unless started,
    /// `timedOut` if the relay thread does not answer within `rebindTimeout`.
    @discardableResult
    public func rebind(clientPort: UInt16) throws(NetEmuError) -> Mapping {
        let request = RebindRequest(clientPort: clientPort)
        lock.lock()
        guard state == .running else {
            lock.unlock()
            throw .notRunning
        }
        rebindRequests.append(request)
        lock.unlock()
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        return try request.wait(timeout: Self.rebindTimeout).get()
    }

    /// Relay thread: opens the new socket before closing the old one, so the kernel can not
    /// hand the same port (or descriptor) back.
    func rebindNow(clientPort: UInt16) -> Result<Mapping, NetEmuError> {
        guard let (key, entry) = mappingsByClient.first(where: { UInt16(bigEndian: $0.value.client.sin_port) == clientPort }) else {
            return .failure(.noMapping(clientPort))
        }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr = target.sin_addr
        let fd: Int32
        do { fd = try UDPSocket.bound(to: local) } catch { return .failure(error) }
        mappingsByClient[key] = (fd, entry.client)
        clientByFD[entry.fd] = nil
        clientByFD[fd] = entry.client
        delayQueue.replaceSocket(entry.fd, with: fd)
        close(entry.fd)
        socketsVersion &+= 1
        let mapping = Mapping(clientPort: clientPort, upstreamPort: UDPSocket.localPort(fd))
        lock.lock()
        if let index = mappingList.firstIndex(where: { $0.clientPort == clientPort }) {
            mappingList[index] = mapping
        } else {
            mappingList.append(mapping)
        }
        lock.unlock()
        return .success(mapping)
    }
}
