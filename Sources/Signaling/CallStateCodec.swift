import CallCore
import Foundation

/// How a ``CallState`` is stored: JSON of its Codable form. The store treats it as opaque.
/// Written by hand (``CallStateJSON``), read by `JSONDecoder`.
enum CallStateCodec {
    /// One decoder for every load: Foundation's decoder keeps no state between calls.
    private static let decoder = JSONDecoder()

    static func encode(_ state: CallState) throws -> Data {
        CallStateJSON.encode(state)
    }

    static func decode(_ data: Data) throws -> CallState {
        try decoder.decode(CallState.self, from: data)
    }
}
