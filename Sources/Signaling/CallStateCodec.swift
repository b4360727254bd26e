import CallCore
import Foundation

/// How a ``CallState`` is stored: JSON of its Codable form. The store treats it as opaque.
enum CallStateCodec {
    static func encode(_ state: CallState) throws -> Data {
        try JSONEncoder().encode(state)
    }

    static func decode(_ data: Data) throws -> CallState {
        try JSONDecoder().decode(CallState.self, from: data)
    }
}
