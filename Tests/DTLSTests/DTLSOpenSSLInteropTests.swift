import XCTest
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import DTLS

/// Interop with an independent DTLS client: `openssl s_client -dtls1_2 -use_srtp` talks over real
/// UDP on 127.0.0.1 to a `DTLSEndpoint` server driven by this test's socket loop. The keying
/// material s_client exports (`-keymatexport EXTRACTOR-dtls_srtp`) must equal ours in the
/// RFC 5764 §4.2 layout, and s_client's close_notify must surface as `.closed`.
final class DTLSOpenSSLInteropTests: XCTestCase {
    func testOpenSSLSClientNegotiatesSRTPAndExportsTheSameKeys() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else {
            throw XCTSkip("/usr/bin/openssl not installed")
        }
        for (offer, expected) in [("SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80", DTLSSRTPProfile.aeadAES128GCM),
                                  ("SRTP_AES128_CM_SHA1_80", .aes128CMHMACSHA180)] {
            try runSClient(offer: offer, expected: expected)
        }
    }

    private func runSClient(offer: String, expected: DTLSSRTPProfile) throws {
        let clientCert = try DTLSCertificate.generate(commonName: "s_client")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-interop-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let certPath = dir.appendingPathComponent("client.pem"), keyPath = dir.appendingPathComponent("client.key")
        try clientCert.pemCertificate.write(to: certPath, atomically: true, encoding: .utf8)
        try clientCert.pemPrivateKey.write(to: keyPath, atomically: true, encoding: .utf8)

        let socket = try UDPSocket()
        defer { socket.close() }
        let server = try DTLSEndpoint(role: .server, certificate: TestCertificates.server,
                                      expectedRemoteFingerprint: clientCert.sha256Fingerprint)
        _ = server.start(now: 0)

        let exportLength = 2 * (expected.keyLength + expected.saltLength)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_client", "-dtls1_2", "-connect", "127.0.0.1:\(socket.port)",
                             "-use_srtp", offer, "-cert", certPath.path, "-key", keyPath.path,
                             "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "\(exportLength)",
                             "-mtu", "1200"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice  // EOF after the handshake: s_client sends close_notify
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        var material: SRTPKeyingMaterial?
        var closed = false
        var failure: DTLSError?
        let start = DispatchTime.now().uptimeNanoseconds
        var largest = 0
        while !closed && failure == nil && DispatchTime.now().uptimeNanoseconds - start < 10_000_000_000 {
            let now = Int64((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
            var outputs: [DTLSOutput] = []
            if let (datagram, peer) = socket.receive(timeoutMilliseconds: 50) {
                socket.peer = peer
                outputs = server.handle(datagram: datagram, now: now)
            } else if let t = server.nextTimeout, t <= now {
                outputs = server.handleTimeout(now: now)
            } else if !process.isRunning {
                break  // s_client gave up; its output says why
            }
            for o in outputs {
                switch o {
                case .send(let d): largest = max(largest, d.count); socket.send(d)
                case .connected(let m): material = m
                case .closed: closed = true
                case .failed(let e): failure = e
                case .dropped: break
                }
            }
        }
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertNil(failure, text)
        let m = try XCTUnwrap(material, text)
        XCTAssertEqual(m.profile, expected)
        XCTAssertTrue(closed, "close_notify not seen\n\(text)")
        XCTAssertLessThanOrEqual(largest, 1200)
        XCTAssertTrue(text.contains("SRTP Extension negotiated, profile=\(expected == .aeadAES128GCM ? "SRTP_AEAD_AES_128_GCM" : "SRTP_AES128_CM_SHA1_80")"), text)
        // s_client prints the exporter output as hex: client key | server key | client salt | server salt.
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.contains("Keying material:") }, text)
        let hex = line.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let ours = m.remoteKey + m.localKey + m.remoteSalt + m.localSalt  // server: remote = client
        XCTAssertEqual(hex.uppercased(), ours.map { String(format: "%02X", $0) }.joined())
    }
}

extension DTLSOpenSSLInteropTests {
    /// The other direction: our client against `openssl s_server -dtls1_2 -use_srtp`, which
    /// prefers GCM from its own list; our close_notify ends s_server's connection.
    func testOpenSSLSServerAcceptsOurClientWithTheSameKeys() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else {
            throw XCTSkip("/usr/bin/openssl not installed")
        }
        let serverCert = try DTLSCertificate.generate(commonName: "s_server")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-interop-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let certPath = dir.appendingPathComponent("server.pem"), keyPath = dir.appendingPathComponent("server.key")
        try serverCert.pemCertificate.write(to: certPath, atomically: true, encoding: .utf8)
        try serverCert.pemPrivateKey.write(to: keyPath, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_server", "-dtls1_2", "-accept", "127.0.0.1:0", "-naccept", "1",
                             "-use_srtp", "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80",
                             "-cert", certPath.path, "-key", keyPath.path, "-verify", "1",
                             "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "56", "-mtu", "1200"]
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input  // kept open: s_server stops on stdin EOF
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        var text = ""
        var port: UInt16?
        let deadline = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
        while port == nil && DispatchTime.now().uptimeNanoseconds < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT") }),
               let p = line.split(separator: ":").last.flatMap({ UInt16($0.trimmingCharacters(in: .whitespaces)) }) {
                port = p
            }
        }
        let serverPort = try XCTUnwrap(port, text)

        let socket = try UDPSocket()
        defer { socket.close() }
        socket.peer.sin_family = sa_family_t(AF_INET)
        socket.peer.sin_port = serverPort.bigEndian
        socket.peer.sin_addr.s_addr = inet_addr("127.0.0.1")
        let client = try DTLSEndpoint(role: .client, certificate: TestCertificates.client,
                                      expectedRemoteFingerprint: serverCert.sha256Fingerprint)
        var material: SRTPKeyingMaterial?
        var failure: DTLSError?
        func deliver(_ outputs: [DTLSOutput]) {
            for o in outputs {
                switch o {
                case .send(let d): socket.send(d)
                case .connected(let m): material = m
                case .failed(let e): failure = e
                case .closed, .dropped: break
                }
            }
        }
        let start = DispatchTime.now().uptimeNanoseconds
        deliver(client.start(now: 0))
        while material == nil && failure == nil && DispatchTime.now().uptimeNanoseconds - start < 10_000_000_000 {
            let now = Int64((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
            if let (datagram, _) = socket.receive(timeoutMilliseconds: 50) {
                deliver(client.handle(datagram: datagram, now: now))
            } else if let t = client.nextTimeout, t <= now {
                deliver(client.handleTimeout(now: now))
            }
        }
        XCTAssertNil(failure)
        let m = try XCTUnwrap(material)
        XCTAssertEqual(m.profile, .aeadAES128GCM)
        deliver(client.close(now: 0))
        XCTAssertEqual(client.state, .closed)
        // -naccept 1: s_server exits after this connection ends.
        let exitDeadline = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
        while process.isRunning && DispatchTime.now().uptimeNanoseconds < exitDeadline { usleep(20_000) }
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(text.contains("SRTP Extension negotiated, profile=SRTP_AEAD_AES_128_GCM"), text)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.contains("Keying material:") }, text)
        let hex = line.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let ours = m.localKey + m.remoteKey + m.localSalt + m.remoteSalt  // client: local = client
        XCTAssertEqual(hex.uppercased(), ours.map { String(format: "%02X", $0) }.joined())
    }
}

/// Minimal blocking-with-timeout IPv4 UDP socket for the interop test.
final class UDPSocket {
    let fd: Int32
    let port: UInt16
    var peer = sockaddr_in()

    init() throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw POSIXError(.EBADF) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { Glibc.close(fd); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    func receive(timeoutMilliseconds: Int32) -> ([UInt8], sockaddr_in)? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, timeoutMilliseconds) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 2048)
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = withUnsafeMutablePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &length) }
        }
        guard n > 0 else { return nil }
        return (Array(buffer[0..<n]), from)
    }

    func send(_ datagram: [UInt8]) {
        var to = peer
        _ = withUnsafePointer(to: &to) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, datagram, datagram.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    func close() { Glibc.close(fd) }
}
