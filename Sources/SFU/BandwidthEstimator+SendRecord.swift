/// What `BandwidthEstimator` keeps per sent packet.
extension BandwidthEstimator {
    /// One send record, packed into 16 bytes: the ring holds 2048 per subscriber, and the
    /// unpacked layout (48 bytes) made it the largest item of a member's memory (192 KB at
    /// 4096 records, docs/benchmarks.md "Memory per participant"); now 32 KB.
    struct Sent {
        /// Low 32 bits of the unwrapped transport-wide sequence number: a slot is reused
        /// every 2048 packets, so 32 bits tell its packet from any other feedback can name.
        private var sequenceTag: UInt32 = 0
        /// 0: not a probe; else the probe cluster id mod 65535, plus 1 (clusters live ≤ 1 s).
        private var probeTag: UInt16 = 0
        /// Bits 0–11: size in bytes (clamped to 4095; WebRTC packets stay ≤ ~1,500 B);
        /// bit 12: occupied; bit 13: acknowledged; bit 14: reported lost.
        private var bits: UInt16 = 0
        private(set) var sendTime: Int64 = 0

        private static let sizeMask: UInt16 = 0x0FFF
        private static let occupiedBit: UInt16 = 1 << 12
        private static let ackedBit: UInt16 = 1 << 13
        private static let lostBit: UInt16 = 1 << 14

        static let empty = Sent()

        init() {}

        init(sequence: Int64, sendTime: Int64, size: Int, probeCluster: Int?) {
            sequenceTag = UInt32(truncatingIfNeeded: sequence)
            probeTag = probeCluster.map { UInt16(truncatingIfNeeded: $0 % 65535) &+ 1 } ?? 0
            bits = UInt16(min(max(size, 0), Int(Self.sizeMask))) | Self.occupiedBit
            self.sendTime = sendTime
        }

        func holds(_ sequence: Int64) -> Bool {
            bits & Self.occupiedBit != 0 && sequenceTag == UInt32(truncatingIfNeeded: sequence)
        }

        var size: Int { Int(bits & Self.sizeMask) }
        var probeCluster: Int? { probeTag == 0 ? nil : Int(probeTag - 1) }
        var acked: Bool {
            get { bits & Self.ackedBit != 0 }
            set { bits = newValue ? bits | Self.ackedBit : bits & ~Self.ackedBit }
        }
        var reportedLost: Bool {
            get { bits & Self.lostBit != 0 }
            set { bits = newValue ? bits | Self.lostBit : bits & ~Self.lostBit }
        }
    }
}
