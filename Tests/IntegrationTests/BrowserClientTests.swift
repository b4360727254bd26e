import Auth
import Foundation
import IO
import SignalingClient
import XCTest

/// The served page and the development-token route, over plain HTTP against the real binary.
final class BrowserClientTests: IntegrationCase {
    func testRootServesTheSelfContainedClientAndNothingElseUnderIt() throws {
        let server = try ServerProcess()
        let page = try http(server, "GET", "/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.headers.first { $0.key.lowercased() == "content-type" }?.value.hasPrefix("text/html") == true, "\(page.headers)")
        let html = String(decoding: page.body, as: UTF8.self)
        XCTAssertTrue(html.contains("window.switchboard"))
        XCTAssertTrue(html.contains("/v1/ws") && html.contains("/v1/dev/token"))
        // Self-contained: no external script, style or media.
        XCTAssertFalse(html.contains("<script src"), "no external scripts")
        XCTAssertFalse(html.contains("src=\"http"), "no CDN")
        XCTAssertFalse(html.contains("<link"), "no external stylesheets")
        XCTAssertEqual(try http(server, "GET", "/no-such-page").status, 404)
        XCTAssertEqual(try http(server, "GET", "/healthz").status, 200, "the catch-all does not shadow other routes")
    }

    func testDevTokenRouteIsOffByDefault() throws {
        let server = try ServerProcess()
        XCTAssertEqual(try http(server, "POST", "/v1/dev/token", body: #"{"account":"alice","device":"laptop"}"#).status, 404)
    }

    func testDevTokenRouteMintsAWorkingTwelveHourTokenAndValidatesIdentifiers() throws {
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        XCTAssertTrue(server.logLines.contains { $0.contains("auth.dev_tokens is on") }, "a loud startup warning")

        let bad = try http(server, "POST", "/v1/dev/token", body: #"{"account":"al ice","device":"laptop"}"#)
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(try JSONSerialization.jsonObject(with: bad.body) as? [String: String],
                       ["error": "invalidIdentifier", "field": "account"])
        let badDevice = try http(server, "POST", "/v1/dev/token", body: #"{"account":"alice","device":"a/b"}"#)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: badDevice.body) as? [String: String])?["field"], "device")
        for body in ["not json", "[]", #"{"account":"alice"}"#, #"{"account":1,"device":"x"}"#, String(repeating: "x", count: 5000)] {
            let response = try http(server, "POST", "/v1/dev/token", body: body)
            XCTAssertEqual(response.status, 400, body)
            XCTAssertEqual((try JSONSerialization.jsonObject(with: response.body) as? [String: String])?["error"], "malformed", body)
        }
        XCTAssertEqual(try http(server, "GET", "/v1/dev/token").status, 405)

        let minted = try http(server, "POST", "/v1/dev/token", body: #"{"account":"alice","device":"laptop"}"#)
        XCTAssertEqual(minted.status, 200)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: minted.body) as? [String: Any])
        let token = try XCTUnwrap(object["token"] as? String)
        let now = Int64(Date().timeIntervalSince1970)
        let claims = try TokenSigner(secret: ServerProcess.secret).verify(token, now: now)
        XCTAssertEqual(claims.account, "alice")
        XCTAssertEqual(claims.device, "laptop")
        XCTAssertEqual(claims.expiresAt - claims.issuedAt, 12 * 3600)
        XCTAssertLessThanOrEqual(abs(claims.issuedAt - now), 5)

        // The token opens a signaling session, and never appears in the logs.
        let client = try SignalingClient(loop: loop, url: server.url, token: token, account: "alice", device: "laptop")
        XCTAssertEqual(client.welcome?["account"] as? String, "alice")
        XCTAssertFalse(server.logLines.joined().contains(token))
    }
}
