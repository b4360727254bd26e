import SFU

/// A snapshot of an `SFUWorkerPool`: each worker's figures and their sum.
public struct SFUWorkerPoolStats: Equatable, Sendable {
    /// Index = worker number.
    public var workers: [SFUServerStats]
    /// Members placed per worker (joins in flight included).
    public var placements: [Int]
    /// Counters and router sizes summed over the workers; members of all workers.
    public var total: SFUServerStats

    public init(workers: [SFUServerStats], placements: [Int]) {
        self.workers = workers
        self.placements = placements
        var total = SFUServerStats(counters: SFUServerCounters(), loop: MediaLoopCounters(), members: [], rooms: 0, subscriptions: 0)
        for worker in workers {
            total.counters = total.counters + worker.counters
            total.loop = total.loop + worker.loop
            total.members += worker.members
            total.rooms += worker.rooms
            total.subscriptions += worker.subscriptions
            total.pacer = total.pacer + worker.pacer
        }
        self.total = total
    }

    /// Datagrams one worker received and passed to the owning worker.
    public var handoffs: UInt64 { total.loop.handoffsOut }
}

extension SFUServerCounters {
    /// Every counter, by name: `+`, `/metrics` and the completeness test
    /// (`SFUCounterFieldsTests`: a field missing here fails it) iterate this list.
    public static let fields: [(name: String, path: WritableKeyPath<SFUServerCounters, UInt64>)] = [
        ("rtpIn", \.rtpIn), ("rtcpIn", \.rtcpIn), ("mediaBeforeKeys", \.mediaBeforeKeys),
        ("srtpAuthFailures", \.srtpAuthFailures), ("srtpReplays", \.srtpReplays), ("srtpMalformed", \.srtpMalformed),
        ("rtpMalformed", \.rtpMalformed), ("rtcpMalformed", \.rtcpMalformed), ("unknownSSRC", \.unknownSSRC),
        ("unknownPayloadType", \.unknownPayloadType), ("forwarded", \.forwarded),
        ("forwardSkippedNoKeys", \.forwardSkippedNoKeys), ("retransmitted", \.retransmitted),
        ("forwardErrors", \.forwardErrors), ("rtcpOut", \.rtcpOut), ("dtlsDropped", \.dtlsDropped),
        ("dtlsFailures", \.dtlsFailures), ("dtlsConnected", \.dtlsConnected), ("offersSent", \.offersSent),
        ("probePadding", \.probePadding), ("pathChanges", \.pathChanges),
    ]

    /// Field-wise sum (wrapping, like the counters themselves).
    public static func + (a: SFUServerCounters, b: SFUServerCounters) -> SFUServerCounters {
        var sum = SFUServerCounters()
        for field in fields { sum[keyPath: field.path] = a[keyPath: field.path] &+ b[keyPath: field.path] }
        return sum
    }
}

extension MediaLoopCounters {
    /// Every counter, by name (see `SFUServerCounters.fields`).
    public static let fields: [(name: String, path: WritableKeyPath<MediaLoopCounters, UInt64>)] = [
        ("datagramsIn", \.datagramsIn), ("bytesIn", \.bytesIn), ("datagramsOut", \.datagramsOut),
        ("bytesQueuedOut", \.bytesQueuedOut), ("unknownPeerDrops", \.unknownPeerDrops), ("stunErrors", \.stunErrors),
        ("stunIn", \.stunIn), ("oversizedDrops", \.oversizedDrops), ("unknownKindDrops", \.unknownKindDrops),
        ("noPathDrops", \.noPathDrops), ("sendDrops", \.sendDrops), ("receiveErrors", \.receiveErrors),
        ("handoffsOut", \.handoffsOut), ("handoffsIn", \.handoffsIn), ("handoffDrops", \.handoffDrops),
        ("loopCPUNanoseconds", \.loopCPUNanoseconds),
    ]

    /// Field-wise sum; `loopCPUNanoseconds` becomes the CPU time of all loop threads.
    public static func + (a: MediaLoopCounters, b: MediaLoopCounters) -> MediaLoopCounters {
        var sum = MediaLoopCounters()
        for field in fields { sum[keyPath: field.path] = a[keyPath: field.path] &+ b[keyPath: field.path] }
        return sum
    }
}
