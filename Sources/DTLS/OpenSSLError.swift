import COpenSSL

/// Drains OpenSSL's thread-local error queue into one line for logs (never contains secrets).
func drainOpenSSLErrors() -> String {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return messages.isEmpty ? "unknown" : messages.joined(separator: "; ")
}

/// Reads everything pending in a memory BIO.
func readAll(_ bio: OpaquePointer) -> [UInt8] {
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = BIO_read(bio, &chunk, Int32(chunk.count))
        if n <= 0 { break }
        out.append(contentsOf: chunk[0..<Int(n)])
    }
    return out
}
