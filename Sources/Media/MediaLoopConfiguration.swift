import ICE

/// Settings of the media socket loop.
public struct MediaLoopConfiguration {
    /// Address to bind: "0.0.0.0" (all IPv4), "::" (dual-stack) or one interface.
    public var host: String
    /// The one UDP port for all participants; 0 = ephemeral (tests).
    public var port: UInt16
    /// Public address put in SDP candidates when the server is behind NAT or in a container
    /// (Janus calls it nat_1_1_mapping). Nil: the bound address.
    public var announcedHost: String?
    /// Public port when a port mapping changes it; nil: the bound port.
    public var announcedPort: UInt16?
    /// Datagrams per recvmmsg/sendmmsg (see `UDPReceiveBatch.defaultCapacity`).
    public var batchSize: Int
    /// Largest datagram accepted (see `UDPReceiveBatch.defaultSlotSize`).
    public var maxDatagramSize: Int
    /// Kernel socket buffer sizes (see `UDPSocket.defaultBufferBytes`).
    public var socketBufferBytes: Int
    /// At most this many receive batches per wakeup (16 × 64 = 1,024 datagrams) before
    /// timers and cross-thread commands get a turn, so a flood cannot starve them.
    public var maxBatchesPerWakeup: Int
    /// SO_REUSEPORT on the socket: set by `SFUWorkerPool` so every worker's socket binds
    /// the same port.
    public var reusePort: Bool

    public init(host: String = "0.0.0.0", port: UInt16 = 0, announcedHost: String? = nil, announcedPort: UInt16? = nil,
                batchSize: Int = UDPReceiveBatch.defaultCapacity, maxDatagramSize: Int = UDPReceiveBatch.defaultSlotSize,
                socketBufferBytes: Int = UDPSocket.defaultBufferBytes, maxBatchesPerWakeup: Int = 16, reusePort: Bool = false) {
        self.host = host
        self.port = port
        self.announcedHost = announcedHost
        self.announcedPort = announcedPort
        self.batchSize = batchSize
        self.maxDatagramSize = maxDatagramSize
        self.socketBufferBytes = socketBufferBytes
        self.maxBatchesPerWakeup = maxBatchesPerWakeup
        self.reusePort = reusePort
    }
}

/// What the loop has seen and done; a snapshot published once per loop iteration.
public struct MediaLoopCounters: Equatable {
    public var datagramsIn: UInt64 = 0
    public var bytesIn: UInt64 = 0
    public var datagramsOut: UInt64 = 0
    public var bytesQueuedOut: UInt64 = 0
    /// DTLS/RTP/RTCP from an address no authenticated check came from (5-tuple unknown).
    public var unknownPeerDrops: UInt64 = 0
    /// STUN datagrams rejected by the ICE agent (bad integrity, unknown user, garbage…).
    public var stunErrors: UInt64 = 0
    /// STUN datagrams handled (accepted or not).
    public var stunIn: UInt64 = 0
    /// Datagrams larger than `maxDatagramSize` (received truncated, or too big to queue).
    public var oversizedDrops: UInt64 = 0
    /// First byte outside STUN/DTLS/RTP ranges (RFC 7983), or empty.
    public var unknownKindDrops: UInt64 = 0
    /// Send to a session without a selected path (not nominated yet, or consent expired).
    public var noPathDrops: UInt64 = 0
    /// Refused by the kernel or dropped on a full socket buffer.
    public var sendDrops: UInt64 = 0
    /// recvmmsg errors other than EAGAIN.
    public var receiveErrors: UInt64 = 0
    /// Datagrams this loop received but another worker owns (its ICE ufrag or 5-tuple is in
    /// the pool's directory under that worker), handed to that worker's inbox
    /// (`SFUWorkerPool`). Counted in `datagramsIn` here, not at the owner.
    public var handoffsOut: UInt64 = 0
    /// Datagrams other workers handed to this loop (processed as if received here).
    public var handoffsIn: UInt64 = 0
    /// Handoffs dropped because the owner's inbox was full (the owner is overloaded).
    public var handoffDrops: UInt64 = 0
    /// CPU time of the loop thread (CLOCK_THREAD_CPUTIME_ID), for benchmarks.
    public var loopCPUNanoseconds: UInt64 = 0

    public init() {}
}
