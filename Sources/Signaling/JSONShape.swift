/// A cheap pre-check of untrusted JSON before it reaches a decoder: bounds the nesting depth
/// so that a frame like `[[[[…]]]]` cannot drive a recursive decoder into a stack overflow.
///
/// It scans bytes once, skipping string contents (with escapes); it does not validate JSON —
/// the decoder does that afterwards.
public enum JSONShape {
    /// 8: the deepest legitimate v1 message (result → first → snapshot → devices → entry) is 5.
    public static let maxDepth = 8

    /// Returns the maximum nesting depth of objects and arrays in `bytes`.
    public static func depth<C: Collection>(of bytes: C) -> Int where C.Element == UInt8 {
        var depth = 0
        var maxSeen = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if depth > maxSeen { maxSeen = depth }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            default: break
            }
        }
        return maxSeen
    }
}
