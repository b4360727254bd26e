import XCTest
@testable import DTLS

final class DTLSCertificateTests: XCTestCase {
    func testGeneratedCertificateFingerprintFormat() throws {
        let cert = try DTLSCertificate.generate(commonName: "switchboard")
        let groups = cert.fingerprint.split(separator: ":")
        XCTAssertEqual(groups.count, 32)
        for g in groups {
            XCTAssertEqual(g.count, 2)
            XCTAssertTrue(g.allSatisfy { "0123456789ABCDEF".contains($0) }, String(g))
        }
        XCTAssertEqual(cert.sha256Fingerprint.sdpValue, "sha-256 " + cert.fingerprint)
        // Two generations differ (fresh key, random serial).
        XCTAssertNotEqual(try DTLSCertificate.generate(commonName: "switchboard").fingerprint, cert.fingerprint)
    }

    func testPEMRoundTripKeepsFingerprintAndWorksInAHandshake() throws {
        let original = try DTLSCertificate.generate(commonName: "configured")
        XCTAssertTrue(original.pemCertificate.hasPrefix("-----BEGIN CERTIFICATE-----"))
        XCTAssertTrue(original.pemPrivateKey.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let loaded = try DTLSCertificate(pemCertificate: original.pemCertificate, pemKey: original.pemPrivateKey)
        XCTAssertEqual(loaded.fingerprint, original.fingerprint)

        let server = try DTLSEndpoint(role: .server, certificate: loaded, expectedRemoteFingerprint: TestCertificates.client.sha256Fingerprint)
        let client = try DTLSEndpoint(role: .client, certificate: TestCertificates.client, expectedRemoteFingerprint: original.sha256Fingerprint)
        let h = DTLSTestHarness(client: client, server: server)
        h.start()
        XCTAssertNotNil(h.clientMaterial)
    }

    func testFingerprintComputedByOpenSSLCommandLineMatches() throws {
        let cert = try DTLSCertificate.generate(commonName: "cli-check")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("cert.pem")
        try cert.pemCertificate.write(to: path, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["x509", "-in", path.path, "-noout", "-fingerprint", "-sha256", "-subject", "-dates", "-text"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertTrue(output.contains("sha256 Fingerprint=\(cert.fingerprint)") || output.contains("SHA256 Fingerprint=\(cert.fingerprint)"), output)
        XCTAssertTrue(output.contains("CN = cli-check"), output)
        XCTAssertTrue(output.contains("prime256v1") || output.contains("P-256"), output)
        XCTAssertTrue(output.contains("ecdsa-with-SHA256"), output)
    }

    func testMismatchedOrBrokenPEMIsRejected() throws {
        let a = try DTLSCertificate.generate(commonName: "a")
        let b = try DTLSCertificate.generate(commonName: "b")
        XCTAssertThrowsError(try DTLSCertificate(pemCertificate: a.pemCertificate, pemKey: b.pemPrivateKey)) { error in
            guard case .certificateInvalid = error as? DTLSError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try DTLSCertificate(pemCertificate: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                                                 pemKey: a.pemPrivateKey)) { error in
            guard case .certificateInvalid = error as? DTLSError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try DTLSCertificate(pemCertificate: "", pemKey: ""))
    }

    func testFingerprintParsing() throws {
        let cert = TestCertificates.server
        let parsed = try DTLSFingerprint(sdpValue: cert.sha256Fingerprint.sdpValue)
        XCTAssertEqual(parsed, cert.sha256Fingerprint)
        XCTAssertEqual(try DTLSFingerprint(sdpValue: "SHA-256 " + cert.fingerprint.lowercased()), cert.sha256Fingerprint)
        for bad in ["", "sha-256", "md5 AB:CD", "sha-256 AB:CD", "sha-256 " + cert.fingerprint + ":00",
                    "sha-256 " + cert.fingerprint.replacingOccurrences(of: ":", with: ""),
                    "sha-1 " + cert.fingerprint, "sha-256 ZZ" + cert.fingerprint.dropFirst(2)] {
            XCTAssertThrowsError(try DTLSFingerprint(sdpValue: bad), bad) { XCTAssertEqual($0 as? DTLSError, .invalidFingerprint) }
        }
        XCTAssertEqual(DTLSError.fingerprintMismatch.code, "dtls_fingerprint_mismatch")
    }
}
