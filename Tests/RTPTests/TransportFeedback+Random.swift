@testable import RTP
import SplitMix

extension TransportFeedback {
    /// Random feedback for round-trip and agreement tests: 1…`maxCount` packets, 20 % reported
    /// missing, 10 % with a large (signed 16-bit) delta, the rest small (0…255 × 250 µs), and
    /// random base sequence number, reference time and feedback count.
    static func random(maxCount: Int, using rng: inout SplitMix64) -> TransportFeedback {
        let count = Int.random(in: 1...maxCount, using: &rng)
        var deltas: [Int16?] = []
        for _ in 0..<count {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...1: deltas.append(nil)
            case 2: deltas.append(Int16.random(in: .min ... .max, using: &rng))
            default: deltas.append(Int16.random(in: 0...255, using: &rng))
            }
        }
        return TransportFeedback(baseSequenceNumber: .random(in: 0 ... .max, using: &rng),
                                 referenceTime: .random(in: 0...0xFF_FFFF, using: &rng),
                                 feedbackPacketCount: .random(in: 0 ... .max, using: &rng), receiveDeltas: deltas)
    }
}
