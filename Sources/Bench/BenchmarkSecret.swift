import Auth
import Foundation

/// Reads the server's HS256 token secret so the benchmark can mint device tokens itself.
enum BenchmarkSecret {
    enum Failure: Error, Equatable {
        case unreadable(String)
        case notBase64
    }

    static func load(_ options: BenchmarkOptions) throws(Failure) -> [UInt8] {
        let text: String
        if let inline = options.secret {
            text = inline
        } else if let path = options.secretFile {
            guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
            text = String(decoding: data, as: UTF8.self)
        } else {
            throw .notBase64
        }
        guard let bytes = decode(text) else { throw .notBase64 }
        return bytes
    }

    /// Base64url (RFC 4648 §5) or base64 (§4) text, padding and surrounding whitespace
    /// allowed — the same forms the server accepts for `token.secret`.
    static func decode(_ text: String) -> [UInt8]? {
        var s = text.trimmingCharacters(in: .whitespacesAndNewlines)
        s = s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while s.hasSuffix("=") { s.removeLast() }
        guard !s.isEmpty, let bytes = Base64URL.decode(s), !bytes.isEmpty else { return nil }
        return bytes
    }
}
