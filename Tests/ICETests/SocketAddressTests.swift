import Glibc
import XCTest
@testable import ICE

final class SocketAddressTests: XCTestCase {
    func testParseAndPrint() throws {
        let v4 = try XCTUnwrap(SocketAddress(host: "192.0.2.1", port: 3478))
        XCTAssertEqual(v4.ipv4, 0xC000_0201)
        XCTAssertEqual(v4.description, "192.0.2.1:3478")
        let v6 = try XCTUnwrap(SocketAddress(host: "2001:db8::1", port: 443))
        XCTAssertEqual(v6.description, "[2001:db8::1]:443")
        XCTAssertNil(SocketAddress(host: "example.org", port: 1))
        XCTAssertNotEqual(v4, SocketAddress(ipv4: 0xC000_0201, port: 3479))
    }

    func testSockaddrRoundTripAndMappedIPv4Folding() throws {
        for address in [SocketAddress(ipv4: 0x7F00_0001, port: 5000), try XCTUnwrap(SocketAddress(host: "fe80::1:2", port: 9))] {
            let (storage, length) = address.sockaddrStorage
            let back = withUnsafeBytes(of: storage) { SocketAddress(sockaddr: $0.baseAddress!, length: Int(length)) }
            XCTAssertEqual(back, address)
        }
        let v4 = SocketAddress(ipv4: 0x7F00_0001, port: 5000)
        var storage = sockaddr_storage()
        let length = withUnsafeMutableBytes(of: &storage) { v4.write(to: $0.baseAddress!, mapToIPv6: true) }
        XCTAssertEqual(Int(length), MemoryLayout<sockaddr_in6>.size)
        XCTAssertEqual(withUnsafeBytes(of: storage) { SocketAddress(sockaddr: $0.baseAddress!, length: Int(length)) }, v4)
        XCTAssertNil(withUnsafeBytes(of: storage) { SocketAddress(sockaddr: $0.baseAddress!, length: 1) })
    }
}
