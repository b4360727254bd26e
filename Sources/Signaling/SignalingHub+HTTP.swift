import Auth
import CallCore
import Foundation

extension SignalingHub {
    /// `GET /v1/calls/{callID}` (docs/protocol.md §7): the snapshot for a participant's
    /// token; 401 for a bad token; 404 both for unknown calls and for calls the account is
    /// not part of, so a stranger cannot probe which call IDs exist.
    public func callSnapshot(callID: String, authorization: String?, time: HubTime) -> (status: Int, body: String) {
        guard let header = authorization, header.hasPrefix("Bearer ") else {
            return (401, Self.httpError("unauthorized", "Authorization: Bearer <token> required"))
        }
        do {
            let claims = try tokens.verify(String(header.dropFirst("Bearer ".count)), now: time.wall / 1000)
            guard WireIdentifier.isValid(callID), let state = try loadState(callID), state.isVisible(to: claims.account) else {
                return (404, Self.httpError("callNotFound", "no such call"))
            }
            return (200, SnapshotJSON.render(state.snapshot))
        } catch let error as TokenError {
            return (401, Self.httpError(error == .expired ? "tokenExpired" : "unauthorized", "token \(error.code)"))
        } catch {
            return (503, Self.httpError("internal", "storage unavailable"))
        }
    }

    /// Who may join the room named `room`: rooms named after an SFU-routed call admit only the
    /// call's two parties (the caller device and the answering device) while it is live; any
    /// other name is an open group room.
    public func roomAccess(_ room: String, for device: DeviceKey) -> RoomAccess {
        guard let state = try? loadState(room) else { return .openRoom }
        guard state.media == .sfu, !state.phase.isTerminal, state.phase != .ringing,
              device == state.caller || device == state.answeredBy else { return .denied }
        return .callParty
    }

    /// `GET /readyz`: the store answers a query.
    public func isReady() -> Bool {
        do {
            _ = try store.nextDeadline()
            return true
        } catch {
            return false
        }
    }

    static func httpError(_ code: String, _ message: String) -> String {
        var w = JSONWriter()
        w.field("code", code)
        w.field("message", message)
        return w.finish()
    }
}

/// The answer of ``SignalingHub/roomAccess(_:for:)``.
public enum RoomAccess: Equatable, Sendable {
    case openRoom
    case callParty
    case denied
}
