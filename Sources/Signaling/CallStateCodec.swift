import CallCore
import Foundation

/// How a ``CallState`` is stored: JSON of its Codable form. The store treats it as opaque.
/// Written by hand (``CallStateJSON``), read by `JSONDecoder`.
///
/// In the store the SDP bodies travel apart (``CallDescriptions``, `StoredCall.descriptions`):
/// the state blob, rewritten on every step, carries them as empty strings.
enum CallStateCodec {
    /// One decoder for every load: Foundation's decoder keeps no state between calls.
    private static let decoder = JSONDecoder()

    /// The whole state, SDP included.
    static func encode(_ state: CallState) throws -> Data {
        CallStateJSON.encode(state)
    }

    /// The state without its SDP bodies, and the bodies.
    static func encodeForStore(_ state: CallState) -> (state: Data, descriptions: Data) {
        (encodeStateForStore(state), CallDescriptions(state).encoded())
    }

    /// The state without its SDP bodies only (a step that leaves the bodies as stored).
    static func encodeStateForStore(_ state: CallState) -> Data {
        CallStateJSON.encode(state, omittingSDP: true)
    }

    static func decode(_ data: Data) throws -> CallState {
        try decoder.decode(CallState.self, from: data)
    }

    /// A stored call: its state with the bodies merged back in.
    static func decode(_ data: Data, descriptions: Data) throws -> CallState {
        var state = try decode(data)
        try CallDescriptions.decode(descriptions).merge(into: &state)
        return state
    }
}
