import CNice
import STUN
import XCTest
@testable import ICE

/// Credentials and request builders shared by the ICE tests.
enum Fixture {
    static let serverUfrag = "srvU"
    static let serverPassword = "serverIcePassword0123456789"
    static let clientUfrag = "cliU"
    static let client = SocketAddress(ipv4: 0xC0A8_0107, port: 50_000)  // 192.168.1.7:50000
    static let other = SocketAddress(ipv4: 0x0A00_0002, port: 40_000)  // 10.0.0.2:40000

    /// A connectivity check as a full controlling agent sends it (RFC 8445 §7.2.2), built
    /// with our STUN builder so tests can leave things out.
    static func request(username: String = "\(serverUfrag):\(clientUfrag)", password: String? = serverPassword,
                        useCandidate: Bool = false, controlling: Bool = true, fingerprint: Bool = true,
                        transaction: UInt64 = 1) throws -> [UInt8] {
        var builder = STUNMessageBuilder(type: .bindingRequest, transactionID: STUNTransactionID(high: 0xABCD, low: transaction))
        try builder.appendUsername(username)
        try builder.appendPriority(0x6E7F_00FF)
        if controlling { try builder.appendICEControlling(tieBreaker: 0x1122_3344) } else { try builder.appendICEControlled(tieBreaker: 0x1122_3344) }
        if useCandidate { try builder.appendUseCandidate() }
        return try builder.build(integrityKey: password.map { Array($0.utf8) }, fingerprint: fingerprint)
    }

    static func agentWithSession(now: Int64 = 0) throws -> (ICELiteAgent, ICESessionID) {
        let agent = ICELiteAgent()
        let id = try agent.register(localUfrag: serverUfrag, localPassword: serverPassword, remoteUfrag: clientUfrag, now: now)
        return (agent, id)
    }
}

extension ICEAction {
    var parsedResponse: STUNMessage? { response.flatMap { try? STUNMessage(parsing: $0) } }
}
