import Foundation

/// An HTTP request as seen by route handlers and at WebSocket upgrade.
public struct HTTPRequest {
    public var method: String
    public var path: String
    public var query: [String: String]
    /// Header names lowercased; repeated headers joined with ", " (RFC 9110 §5.3).
    public var headers: [String: String]
    public var body: Data
    public var remoteAddress: String

    public init(method: String, path: String, query: [String: String] = [:],
                headers: [String: String] = [:], body: Data = Data(), remoteAddress: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }
}

/// An HTTP response returned by a route handler.
public struct HTTPResponse {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(_ status: Int, _ data: Data) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["content-type": "application/json"], body: data)
    }

    public static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["content-type": "text/plain; charset=utf-8"],
                     body: Data(text.utf8))
    }

    /// `{"error":"<code>"}`, the shape of this module's own 404/405 replies.
    static func jsonError(_ status: Int, _ code: String) -> HTTPResponse {
        json(status, Data("{\"error\":\"\(code)\"}".utf8))
    }
}
