import CallCore
import Foundation

/// The SDP bodies of a call's negotiation (the pending offer and the last answer, 2.5–3 KB
/// each), stored apart from the rest of the state in ``StoredCall/descriptions``: the call
/// row is rewritten on every step of a call (~11 per setup), the bodies change on a few
/// (invite, answer, renegotiation, end). The state row keeps each description's side and
/// generation with an empty `sdp`; ``merge(into:)`` puts the bodies back on load.
///
/// Stored as JSON `{"pendingOffer":"<sdp>","lastAnswer":"<sdp>"}`, a key left out when the
/// state has no such description, and as empty data when it has neither (no row).
struct CallDescriptions: Codable, Equatable {
    var pendingOffer: String?
    var lastAnswer: String?

    init(pendingOffer: String? = nil, lastAnswer: String? = nil) {
        self.pendingOffer = pendingOffer
        self.lastAnswer = lastAnswer
    }

    init(_ state: borrowing CallState) {
        pendingOffer = state.negotiation.pendingOffer?.description.sdp
        lastAnswer = state.negotiation.lastAnswer?.description.sdp
    }

    /// The bodies the store keeps for `state`: none once the call has ended. Nothing reads
    /// an ended call's SDP (snapshots carry none, the reducer refuses negotiation on an
    /// ended call, outbox entries hold their own copies), so keeping it for the tombstone's
    /// retention (24 h by default) only cost ~2.7 KB per call in the file, kept the table
    /// (and each of its lookups) growing with every call of the window, and kept the
    /// parties' ICE addresses on disk after the call (docs/threat-model.md).
    init(storing state: borrowing CallState) {
        self = state.phase.isTerminal ? CallDescriptions() : CallDescriptions(state)
    }

    var isEmpty: Bool { pendingOffer == nil && lastAnswer == nil }

    func encoded() -> Data {
        var sdps = QuotedSDPMemo()
        return encoded(sdps: &sdps)
    }

    /// ``encoded()`` with the bodies' literals from `sdps`: the offer was just written into
    /// `call.incoming`, the answer into `call.answered`, by the same step.
    func encoded(sdps: inout QuotedSDPMemo) -> Data {
        guard !isEmpty else { return Data() }
        let offer = pendingOffer.map { sdps.quoted($0) }, answer = lastAnswer.map { sdps.quoted($0) }
        // 48: the two keys and braces.
        var w = JSONWriter(capacity: 48 + (offer?.count ?? 0) + (answer?.count ?? 0))
        w.field("pendingOffer", quoted: offer)
        w.field("lastAnswer", quoted: answer)
        return Data(w.finishBytes())
    }

    /// Empty data decodes to no bodies (a call without descriptions, or a row written before
    /// schema 3, whose state still holds its SDP inline).
    static func decode(_ data: Data) throws -> CallDescriptions {
        guard !data.isEmpty else { return CallDescriptions() }
        return try JSONDecoder().decode(CallDescriptions.self, from: data)
    }

    /// Puts the bodies into a state read from a row written without them. A body for a
    /// description the state does not have is ignored: both are written by the same commit,
    /// so that does not happen, and a state must never gain a description from here.
    func merge(into state: inout CallState) {
        if let sdp = pendingOffer { state.negotiation.pendingOffer?.description.sdp = sdp }
        if let sdp = lastAnswer { state.negotiation.lastAnswer?.description.sdp = sdp }
    }
}
