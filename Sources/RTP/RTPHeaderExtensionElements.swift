/// One RFC 8285 header extension element: its local id and where its value lives.
public struct RTPHeaderExtensionElement: Equatable, Sendable {
    /// Local identifier (1–14 one-byte form, 1–255 two-byte form).
    public let id: UInt8
    /// Byte range of the value inside the packet buffer.
    public let valueRange: Range<Int>
}

/// Non-allocating sequence over the elements of an RFC 8285 header extension.
///
/// One-byte form (profile `0xBEDE`, §4.2): `ID(4) L(4)` then L+1 value bytes; ID 0 is a
/// padding byte, ID 15 stops processing. Two-byte form (profile `0x100X`, §4.3):
/// `ID(8) L(8)` then L value bytes; ID 0 is a padding byte. Any other profile yields no
/// elements (the extension stays opaque).
public struct RTPHeaderExtensionElements: Sequence {
    let buffer: UnsafeRawBufferPointer
    let profile: UInt16
    let range: Range<Int>

    /// RFC 8285 §4.2 one-byte header profile.
    public static let oneByteProfile: UInt16 = 0xBEDE
    /// RFC 8285 §4.3 two-byte header profile (the low 4 "appbits" are application data).
    public static let twoByteProfileBase: UInt16 = 0x1000

    static func isOneByte(_ profile: UInt16) -> Bool { profile == oneByteProfile }
    static func isTwoByte(_ profile: UInt16) -> Bool { profile & 0xFFF0 == twoByteProfileBase }

    /// Walks once and throws `.badExtension` if an element runs past the extension.
    static func validate(
        _ buffer: UnsafeRawBufferPointer, profile: UInt16, range: Range<Int>
    ) throws(RTPError) {
        var iterator = Iterator(buffer: buffer, profile: profile, position: range.lowerBound, end: range.upperBound)
        while true {
            switch iterator.step() {
            case .element: continue
            case .end: return
            case .malformed: throw .badExtension
            }
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(buffer: buffer, profile: profile, position: range.lowerBound, end: range.upperBound)
    }

    public struct Iterator: IteratorProtocol {
        let buffer: UnsafeRawBufferPointer
        let profile: UInt16
        var position: Int
        let end: Int

        enum Step { case element(RTPHeaderExtensionElement), end, malformed }

        public mutating func next() -> RTPHeaderExtensionElement? {
            if case .element(let element) = step() { return element }
            return nil
        }

        mutating func step() -> Step {
            let oneByte = RTPHeaderExtensionElements.isOneByte(profile)
            guard oneByte || RTPHeaderExtensionElements.isTwoByte(profile) else { return .end }
            while position < end {
                let first = buffer[position]
                if first == 0 { position += 1; continue }  // padding octet
                let id: UInt8
                let length: Int
                let valueStart: Int
                if oneByte {
                    id = first >> 4
                    if id == 15 { position = end; return .end }  // §4.2: stop processing
                    length = Int(first & 0x0F) + 1
                    valueStart = position + 1
                } else {
                    guard position + 2 <= end else { position = end; return .malformed }
                    id = first
                    length = Int(buffer[position + 1])
                    valueStart = position + 2
                }
                let valueEnd = valueStart + length
                guard valueEnd <= end else { position = end; return .malformed }
                position = valueEnd
                return .element(RTPHeaderExtensionElement(id: id, valueRange: valueStart..<valueEnd))
            }
            return .end
        }
    }
}
