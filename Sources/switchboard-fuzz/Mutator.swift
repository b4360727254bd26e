import SplitMix

/// Seeded structure-blind mutations for replay mode (no coverage feedback): byte flips,
/// interesting values, 16-bit length-field nudges, truncation, insertion/deletion, chunk
/// duplication and splicing with another seed. Mutation `index` of a target depends only on
/// (seed, target, index), so any failing input can be regenerated with `--dump`.
struct Mutator {
    /// Corpus the mutations start from (and splice with); never empty (falls back to `[[]]`).
    let corpus: [[UInt8]]
    let isText: Bool

    /// Largest mutated input: a jumbo UDP datagram is 9000 bytes; SDP offers here are < 8 KiB.
    static let maxLength = 16_384
    /// Values that sit on boundaries of the wire fields (0, sign bits, all-ones, RTCP/RTP version bits).
    static let interesting: [UInt8] = [0x00, 0x01, 0x02, 0x03, 0x04, 0x0F, 0x10, 0x1F, 0x20, 0x3F, 0x40, 0x7F, 0x80, 0x81, 0xBE, 0xDE, 0xFE, 0xFF]

    init(corpus: [[UInt8]], isText: Bool) {
        self.corpus = corpus.isEmpty ? [[]] : corpus
        self.isText = isText
    }

    /// The `index`-th mutated input: a corpus entry (round robin) with 1–4 stacked mutations.
    func input(_ index: Int, seed: UInt64, salt: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed ^ salt ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        var bytes = corpus[index % corpus.count]
        let rounds = 1 + Int(rng.next() % 4)
        for _ in 0..<rounds { mutate(&bytes, &rng) }
        if bytes.count > Self.maxLength { bytes.removeLast(bytes.count - Self.maxLength) }
        return bytes
    }

    private func mutate(_ bytes: inout [UInt8], _ rng: inout SplitMix64) {
        func position(_ count: Int) -> Int { count == 0 ? 0 : Int(rng.next() % UInt64(count)) }
        let choice = rng.next() % (isText ? 11 : 9)
        switch choice {
        case 0 where !bytes.isEmpty:  // flip one bit
            bytes[position(bytes.count)] ^= UInt8(1) << (rng.next() % 8)
        case 1 where !bytes.isEmpty:  // random byte
            bytes[position(bytes.count)] = UInt8(truncatingIfNeeded: rng.next())
        case 2 where !bytes.isEmpty:  // interesting byte
            bytes[position(bytes.count)] = Self.interesting[position(Self.interesting.count)]
        case 3 where bytes.count >= 2:  // nudge a big-endian 16-bit field (lengths, counts)
            let at = position(bytes.count - 1)
            let value = (UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])) &+ UInt16(bitPattern: Int16(truncatingIfNeeded: Int(rng.next() % 9) - 4))
            bytes[at] = UInt8(value >> 8)
            bytes[at + 1] = UInt8(truncatingIfNeeded: value)
        case 4 where !bytes.isEmpty:  // truncate
            bytes.removeLast(1 + position(bytes.count))
        case 5:  // insert random bytes
            let count = 1 + position(8)
            let at = position(bytes.count + 1)
            bytes.insert(contentsOf: (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
        case 6 where !bytes.isEmpty:  // delete a range
            let at = position(bytes.count)
            bytes.removeSubrange(at..<min(bytes.count, at + 1 + position(16)))
        case 7 where !bytes.isEmpty:  // duplicate a chunk in place
            let at = position(bytes.count)
            let chunk = Array(bytes[at..<min(bytes.count, at + 1 + position(64))])
            bytes.insert(contentsOf: chunk, at: position(bytes.count + 1))
        case 8:  // splice: our prefix, another seed's suffix
            let other = corpus[position(corpus.count)]
            bytes = Array(bytes.prefix(position(bytes.count + 1))) + other.suffix(position(other.count + 1))
        case 9:  // text: swap two lines
            var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            guard lines.count > 1 else { return }
            lines.swapAt(position(lines.count), position(lines.count))
            bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
        case 10:  // text: copy a line from another seed into a random place
            let other = corpus[position(corpus.count)].split(separator: UInt8(ascii: "\n"))
            guard let line = other.isEmpty ? nil : other[position(other.count)] else { return }
            var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            lines.insert(line, at: position(lines.count + 1))
            bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
        default:
            bytes.append(UInt8(truncatingIfNeeded: rng.next()))
        }
    }
}
