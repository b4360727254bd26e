import Auth
import Foundation
import XCTest
@testable import Server

final class TokenSecretTests: XCTestCase {
    private var temp: TempDirectory!

    override func setUpWithError() throws { temp = try TempDirectory() }
    override func tearDown() { temp.remove() }

    private func config(secretFile: String) -> ServerConfig {
        var config = ServerConfig()
        config.token.secretFile = secretFile
        return config
    }

    func testCreatesSecretFileWith0600OnFirstRunAndReusesIt() throws {
        let path = temp.file("nested/dir/token-secret")
        let first = try config(secretFile: path).resolveTokenSecret()
        XCTAssertEqual(first.count, 32)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let directoryAttributes = try FileManager.default.attributesOfItem(atPath: temp.file("nested/dir"))
        XCTAssertEqual((directoryAttributes[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertEqual(Base64URL.decode(text.trimmingCharacters(in: .newlines)), first)
        XCTAssertEqual(try config(secretFile: path).resolveTokenSecret(), first, "second run reads the same secret")
    }

    func testDoesNotCreateWhenAskedNotTo() {
        let path = temp.file("token-secret")
        XCTAssertThrowsError(try config(secretFile: path).resolveTokenSecret(createIfMissing: false)) {
            guard case .tokenSecret(let reportedPath, _)? = $0 as? ConfigError else { return XCTFail("\($0)") }
            XCTAssertEqual(reportedPath, path)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    /// `openssl rand -base64 32` output (standard alphabet, padding, newline) is accepted.
    func testAcceptsStandardBase64File() throws {
        let bytes = (0 ..< 32).map { UInt8(($0 * 7 + 250) & 0xFF) }
        let path = try temp.write("s", Data(bytes).base64EncodedString() + "\n")
        XCTAssertEqual(try config(secretFile: path).resolveTokenSecret(), bytes)
    }

    func testRejectsWorldReadableShortAndGarbageFiles() throws {
        let good = Base64URL.encode([UInt8](repeating: 7, count: 32))
        for (name, text, mode) in [("open", good, 0o644), ("short", Base64URL.encode([1, 2, 3]), 0o600), ("junk", "not base64!", 0o600)] {
            let path = try temp.write(name, text, mode: mode)
            XCTAssertThrowsError(try config(secretFile: path).resolveTokenSecret(), name) {
                guard case .tokenSecret = $0 as? ConfigError else { return XCTFail("\($0)") }
            }
        }
        XCTAssertNoThrow(try config(secretFile: temp.write("group", good, mode: 0o640)).resolveTokenSecret())
    }

    func testInlineSecret() throws {
        var config = ServerConfig()
        config.token.secret = Base64URL.encode([UInt8](repeating: 9, count: 40))
        config.token.secretFile = temp.file("never-created")
        XCTAssertEqual(try config.resolveTokenSecret(), [UInt8](repeating: 9, count: 40))
        XCTAssertFalse(FileManager.default.fileExists(atPath: config.token.secretFile))
    }
}
