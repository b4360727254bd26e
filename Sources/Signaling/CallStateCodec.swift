import CallCore
import Foundation

/// How a ``CallState`` is stored: the compact form of ``CallStateCompact``. Rows written by
/// older builds hold the JSON of its Codable form (written by hand, ``CallStateJSON``, and
/// read by `JSONDecoder`), and are still read. The store treats either as opaque.
///
/// In the store the SDP bodies travel apart (``CallDescriptions``, `StoredCall.descriptions`):
/// the state blob, rewritten on every step, carries them as empty strings.
enum CallStateCodec {
    /// One decoder for every load: Foundation's decoder keeps no state between calls.
    private static let decoder = JSONDecoder()

    /// The whole state, SDP included, as JSON: the form of rows written before schema 3
    /// (and before the compact form), for tests of reading them.
    static func encode(_ state: CallState) throws -> Data {
        CallStateJSON.encode(state)
    }

    /// The state without its SDP bodies, and the bodies.
    static func encodeForStore(_ state: CallState) -> (state: Data, descriptions: Data) {
        (encodeStateForStore(state), CallDescriptions(state).encoded())
    }

    /// The state without its SDP bodies only (a step that leaves the bodies as stored).
    static func encodeStateForStore(_ state: CallState) -> Data {
        CallStateCompact.encode(state, omittingSDP: true)
    }

    /// Either form: compact, or the JSON of older builds.
    static func decode(_ data: Data) throws -> CallState {
        if CallStateCompact.isCompact(data) { return try CallStateCompact.decode(data) }
        return try decoder.decode(CallState.self, from: data)
    }

    /// A stored call: its state with the bodies merged back in.
    static func decode(_ data: Data, descriptions: Data) throws -> CallState {
        var state = try decode(data)
        try CallDescriptions.decode(descriptions).merge(into: &state)
        return state
    }
}
