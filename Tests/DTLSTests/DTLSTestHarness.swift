import XCTest
@testable import DTLS

/// Passes datagrams between two in-memory endpoints, optionally dropping some, and records
/// everything that crossed the "wire".
final class DTLSTestHarness {
    enum Direction { case toServer, toClient }

    let client: DTLSEndpoint
    let server: DTLSEndpoint
    var now: Int64 = 0
    /// Every datagram handed to the wire, in order, with its direction.
    private(set) var wire: [(Direction, [UInt8])] = []
    private(set) var clientEvents: [DTLSOutput] = []
    private(set) var serverEvents: [DTLSOutput] = []
    /// Return true to drop the n-th datagram (0-based count per direction).
    var drop: (Direction, Int) -> Bool = { _, _ in false }
    private var sentCount: [Direction: Int] = [:]
    private var queue: [(Direction, [UInt8])] = []

    init(client: DTLSEndpoint, server: DTLSEndpoint) {
        self.client = client
        self.server = server
    }

    func route(_ outputs: [DTLSOutput], from direction: Direction) {
        for output in outputs {
            switch output {
            case .send(let datagram):
                wire.append((direction, datagram))
                let n = sentCount[direction, default: 0]
                sentCount[direction] = n + 1
                if !drop(direction, n) { queue.append((direction, datagram)) }
            default:
                if direction == .toServer { clientEvents.append(output) } else { serverEvents.append(output) }
            }
        }
    }

    /// Delivers queued datagrams until the wire is quiet.
    func pump() {
        var guardCount = 0
        while !queue.isEmpty && guardCount < 1000 {
            guardCount += 1
            let (direction, datagram) = queue.removeFirst()
            switch direction {
            case .toServer: route(server.handle(datagram: datagram, now: now), from: .toClient)
            case .toClient: route(client.handle(datagram: datagram, now: now), from: .toServer)
            }
        }
    }

    func start() {
        route(server.start(now: now), from: .toClient)
        route(client.start(now: now), from: .toServer)
        pump()
    }

    var clientMaterial: SRTPKeyingMaterial? { Self.material(in: clientEvents) }
    var serverMaterial: SRTPKeyingMaterial? { Self.material(in: serverEvents) }

    static func material(in events: [DTLSOutput]) -> SRTPKeyingMaterial? {
        for case .connected(let m) in events { return m }
        return nil
    }

    static func failure(in events: [DTLSOutput]) -> DTLSError? {
        for case .failed(let e) in events { return e }
        return nil
    }
}

enum TestCertificates {
    /// Generated once per test process (keygen is the slow part).
    static let server: DTLSCertificate = try! DTLSCertificate.generate(commonName: "switchboard-test-server")
    static let client: DTLSCertificate = try! DTLSCertificate.generate(commonName: "switchboard-test-client")
}

extension XCTestCase {
    func makePair(
        clientConfiguration: DTLSEndpoint.Configuration = .init(),
        serverConfiguration: DTLSEndpoint.Configuration = .init(),
        clientExpects: DTLSFingerprint? = TestCertificates.server.sha256Fingerprint,
        serverExpects: DTLSFingerprint? = TestCertificates.client.sha256Fingerprint
    ) throws -> DTLSTestHarness {
        let client = try DTLSEndpoint(role: .client, certificate: TestCertificates.client,
                                      expectedRemoteFingerprint: clientExpects, configuration: clientConfiguration)
        let server = try DTLSEndpoint(role: .server, certificate: TestCertificates.server,
                                      expectedRemoteFingerprint: serverExpects, configuration: serverConfiguration)
        return DTLSTestHarness(client: client, server: server)
    }
}
