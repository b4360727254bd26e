import Foundation

/// One frame the server sent, parsed loosely for clients and tests.
public struct ServerFrame: @unchecked Sendable, CustomStringConvertible {
    public let text: String
    public let object: [String: Any]

    public init?(text: String) {
        guard let data = text.data(using: .utf8),
              let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        self.text = text
        self.object = object
    }

    public var type: String { object["type"] as? String ?? "" }
    public var callID: String? { object["callID"] as? String }
    public var eventID: String? { object["eventID"] as? String }
    public var status: String? { object["status"] as? String }
    public var code: String? { object["code"] as? String }
    public var reason: String? { object["reason"] as? String }
    public var sdp: String? { object["sdp"] as? String }
    public var revision: Int64? { (object["revision"] as? NSNumber)?.int64Value }
    public var generation: Int64? { (object["generation"] as? NSNumber)?.int64Value }
    /// Durable events carry their stream position as a decimal string (opaque to clients).
    public var seq: Int64? { (object["seq"] as? String).flatMap { Int64($0) } }
    public var snapshot: [String: Any]? { object["snapshot"] as? [String: Any] }
    /// The call's phase: an accepted result's and a `call.state` event's own field, else the
    /// snapshot's (rejections, `call.get`, other events).
    public var phase: String? { object["phase"] as? String ?? snapshot?["phase"] as? String }
    /// The end reason of an accepted result that ended the call, else the snapshot's.
    public var endReason: String? { object["endReason"] as? String ?? snapshot?["endReason"] as? String }
    public subscript(key: String) -> Any? { object[key] }

    public var description: String { text }
}
