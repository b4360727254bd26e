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
        }
        self.total = total
    }

    /// Datagrams one worker received and passed to the owning worker.
    public var handoffs: UInt64 { total.loop.handoffsOut }
}

extension SFUServerCounters {
    /// Field-wise sum (wrapping, like the counters themselves).
    public static func + (a: SFUServerCounters, b: SFUServerCounters) -> SFUServerCounters {
        var sum = SFUServerCounters()
        sum.rtpIn = a.rtpIn &+ b.rtpIn
        sum.rtcpIn = a.rtcpIn &+ b.rtcpIn
        sum.mediaBeforeKeys = a.mediaBeforeKeys &+ b.mediaBeforeKeys
        sum.srtpAuthFailures = a.srtpAuthFailures &+ b.srtpAuthFailures
        sum.srtpReplays = a.srtpReplays &+ b.srtpReplays
        sum.srtpMalformed = a.srtpMalformed &+ b.srtpMalformed
        sum.rtpMalformed = a.rtpMalformed &+ b.rtpMalformed
        sum.rtcpMalformed = a.rtcpMalformed &+ b.rtcpMalformed
        sum.unknownSSRC = a.unknownSSRC &+ b.unknownSSRC
        sum.unknownPayloadType = a.unknownPayloadType &+ b.unknownPayloadType
        sum.forwarded = a.forwarded &+ b.forwarded
        sum.forwardSkippedNoKeys = a.forwardSkippedNoKeys &+ b.forwardSkippedNoKeys
        sum.retransmitted = a.retransmitted &+ b.retransmitted
        sum.forwardErrors = a.forwardErrors &+ b.forwardErrors
        sum.rtcpOut = a.rtcpOut &+ b.rtcpOut
        sum.dtlsDropped = a.dtlsDropped &+ b.dtlsDropped
        sum.dtlsFailures = a.dtlsFailures &+ b.dtlsFailures
        sum.dtlsConnected = a.dtlsConnected &+ b.dtlsConnected
        sum.offersSent = a.offersSent &+ b.offersSent
        return sum
    }
}

extension MediaLoopCounters {
    /// Field-wise sum; `loopCPUNanoseconds` becomes the CPU time of all loop threads.
    public static func + (a: MediaLoopCounters, b: MediaLoopCounters) -> MediaLoopCounters {
        var sum = MediaLoopCounters()
        sum.datagramsIn = a.datagramsIn &+ b.datagramsIn
        sum.bytesIn = a.bytesIn &+ b.bytesIn
        sum.datagramsOut = a.datagramsOut &+ b.datagramsOut
        sum.bytesQueuedOut = a.bytesQueuedOut &+ b.bytesQueuedOut
        sum.unknownPeerDrops = a.unknownPeerDrops &+ b.unknownPeerDrops
        sum.stunErrors = a.stunErrors &+ b.stunErrors
        sum.stunIn = a.stunIn &+ b.stunIn
        sum.oversizedDrops = a.oversizedDrops &+ b.oversizedDrops
        sum.unknownKindDrops = a.unknownKindDrops &+ b.unknownKindDrops
        sum.noPathDrops = a.noPathDrops &+ b.noPathDrops
        sum.sendDrops = a.sendDrops &+ b.sendDrops
        sum.receiveErrors = a.receiveErrors &+ b.receiveErrors
        sum.handoffsOut = a.handoffsOut &+ b.handoffsOut
        sum.handoffsIn = a.handoffsIn &+ b.handoffsIn
        sum.handoffDrops = a.handoffDrops &+ b.handoffDrops
        sum.loopCPUNanoseconds = a.loopCPUNanoseconds &+ b.loopCPUNanoseconds
        return sum
    }
}
