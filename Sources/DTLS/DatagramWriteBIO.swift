import COpenSSL

/// Collects the records OpenSSL writes during one endpoint step and packs them into datagrams.
///
/// OpenSSL's DTLS code writes one record per `BIO_write`; its own datagram BIO sends each record as
/// a separate datagram. We instead append consecutive records of a flight into one datagram while it
/// stays within the MTU (RFC 6347 §4.1.1 allows several records per datagram), so a typical flight
/// leaves as a single datagram.
final class DatagramCollector {
    let mtu: Int
    private(set) var datagrams: [[UInt8]] = []
    private var current: [UInt8] = []

    init(mtu: Int) {
        self.mtu = mtu
    }

    /// Takes what one `BIO_write` carried: one record, or several when OpenSSL flushes a buffered
    /// group (e.g. ChangeCipherSpec + Finished). Each record is packed separately so that no
    /// datagram exceeds the MTU unless a single record does.
    func append(_ written: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < written.count {
            var end = written.count
            if written.count - offset >= DTLSRecordFraming.headerLength {
                let length = Int(written[offset + 11]) << 8 | Int(written[offset + 12])
                end = min(written.count, offset + DTLSRecordFraming.headerLength + length)
            }
            appendRecord(UnsafeRawBufferPointer(rebasing: written[offset..<end]))
            offset = end
        }
    }

    private func appendRecord(_ record: UnsafeRawBufferPointer) {
        if !current.isEmpty && current.count + record.count > mtu {
            datagrams.append(current)
            current = []
        }
        current.append(contentsOf: record)
    }

    /// Ends the step: returns every datagram written since the last call.
    func take() -> [[UInt8]] {
        if !current.isEmpty {
            datagrams.append(current)
            current = []
        }
        defer { datagrams = [] }
        return datagrams
    }
}

/// A `BIO_METHOD` whose writes go to the `DatagramCollector` stored in the BIO's data pointer.
enum DatagramWriteBIO {
    private struct Method: @unchecked Sendable {  // immutable after creation, shared read-only
        let pointer: OpaquePointer?
    }

    private static let method: Method = {
        let type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK
        guard let m = BIO_meth_new(type, "switchboard-dtls-datagram") else { return Method(pointer: nil) }
        _ = BIO_meth_set_write(m) { bio, data, length in
            guard let bio, let data, length > 0, let raw = BIO_get_data(bio) else { return length == 0 ? 0 : -1 }
            let collector = Unmanaged<DatagramCollector>.fromOpaque(raw).takeUnretainedValue()
            collector.append(UnsafeRawBufferPointer(start: data, count: Int(length)))
            return length
        }
        _ = BIO_meth_set_ctrl(m) { _, command, _, _ in
            switch command {
            case BIO_CTRL_FLUSH: return 1
            // No kernel to ask: the MTU is set explicitly with SSL_set_mtu (SSL_OP_NO_QUERY_MTU).
            case BIO_CTRL_DGRAM_QUERY_MTU, BIO_CTRL_DGRAM_GET_MTU_OVERHEAD: return 0
            case BIO_CTRL_PENDING, BIO_CTRL_WPENDING: return 0
            default: return 0
            }
        }
        _ = BIO_meth_set_create(m) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        return Method(pointer: m)
    }()

    /// A new write BIO feeding `collector` (held unretained: the endpoint owns both and frees the
    /// SSL, hence the BIO, before the collector).
    static func make(collector: DatagramCollector) -> OpaquePointer? {
        guard let m = method.pointer, let bio = BIO_new(m) else { return nil }
        BIO_set_data(bio, Unmanaged.passUnretained(collector).toOpaque())
        return bio
    }
}
