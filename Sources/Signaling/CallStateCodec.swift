import CallCore
import Foundation

/// How a ``CallState`` is stored: JSON of its Codable form. The store treats it as opaque.
enum CallStateCodec {
    /// One encoder for every commit: creating a `JSONEncoder` per step was a visible share
    /// of the per-command cost (docs/benchmarks.md). Foundation's encoder keeps no state
    /// between `encode` calls and is Sendable.
    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()

    static func encode(_ state: CallState) throws -> Data {
        try encoder.encode(state)
    }

    static func decode(_ data: Data) throws -> CallState {
        try decoder.decode(CallState.self, from: data)
    }
}
