// swift-tools-version:6.0
// Switchboard: call signaling and media relay server.
// No outside Swift packages: C libraries come from Debian as system-library targets.
import PackageDescription

/// Adapter modules that drive GLib callbacks and threads use the Swift 5 language mode; the
/// pure modules (CallCore, RTP, STUN, Signaling, Auth) keep Swift 6 strict concurrency.
let v5: [SwiftSetting] = [.swiftLanguageMode(.v5)]

let package = Package(
    name: "Switchboard",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "switchboard", targets: ["switchboard"]),
    ],
    targets: [
        // MARK: System libraries (Debian -dev packages; see README).
        .systemLibrary(name: "CNice", pkgConfig: "nice", providers: [.apt(["libnice-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSoup", pkgConfig: "libsoup-3.0", providers: [.apt(["libsoup-3.0-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CTCMalloc", providers: [.apt(["libtcmalloc-minimal4"])]),
        // Linux socket calls Swift's Glibc module does not expose (sendmmsg/recvmmsg need _GNU_SOURCE).
        .systemLibrary(name: "CSocket"),

        // MARK: Pure logic (no I/O, no clock reads).
        .target(name: "CallCore"),
        .target(name: "SplitMix"),
        .target(name: "RTP"),
        .target(name: "STUN"),
        .target(name: "SDP"),
        .target(name: "SFU", dependencies: ["RTP"]),

        // MARK: Adapters.
        .target(name: "Logging"),
        .target(name: "Auth", dependencies: ["COpenSSL"]),
        .target(name: "Storage", dependencies: ["CSQLite"]),
        // OpenSSL-backed AES-ICM/AES-GCM/HMAC-SHA1 for libsrtp2 (no per-packet allocation; issue 3).
        .target(name: "CSRTPCrypto", dependencies: ["CSRTP", "COpenSSL"]),
        .target(name: "SRTP", dependencies: ["CSRTP", "CSRTPCrypto"]),
        .target(name: "DTLS", dependencies: ["COpenSSL"]),
        .target(name: "ICE", dependencies: ["STUN", "CNice"]),
        .target(name: "Media", dependencies: ["CSocket", "ICE", "DTLS", "SRTP", "SFU", "RTP", "STUN", "SDP", "Logging"], swiftSettings: v5),
        .target(name: "Peer", dependencies: ["CNice", "COpus", "DTLS", "SRTP", "RTP", "SDP", "SFU", "SignalingClient", "IO"], swiftSettings: v5),
        // Interposes GLib's `g_log` to drop unwanted debug messages before formatting them.
        .target(name: "CGLibLog", linkerSettings: [.linkedLibrary("glib-2.0")]),
        // The GIOStream under the server's WebSocket connections (sources without poll records).
        .target(name: "CWebSocketStream", dependencies: ["CSoup"]),
        .target(name: "IO", dependencies: ["CSoup", "CGLibLog", "CWebSocketStream", "Logging"], swiftSettings: v5),
        .target(name: "Signaling", dependencies: ["CallCore", "Storage", "Auth", "Logging"]),
        .target(name: "SignalingClient", dependencies: ["IO"], swiftSettings: v5),
        .target(name: "Bench", dependencies: ["IO", "Auth", "Logging", "SplitMix"], swiftSettings: v5),
        .target(name: "Server", dependencies: ["IO", "Signaling", "Storage", "Auth", "Logging", "SignalingClient", "Bench", "Media", "DTLS"], swiftSettings: v5),
        // User-space UDP impairment relay for tests (the kernel here has no netem; issue 4).
        .target(name: "NetEmu", swiftSettings: v5),
        // Test support: interposes malloc & co. to count a thread's heap allocations (issue 3).
        .target(name: "CAllocationCounter", path: "Tests/Support/CAllocationCounter"),
        .executableTarget(name: "switchboard", dependencies: ["Server", "CTCMalloc"], swiftSettings: v5),
        // Fuzz targets per parser: libFuzzer entry with -DFUZZING -sanitize=fuzzer, corpus replay
        // plus seeded mutations otherwise (scripts/fuzz.sh, docs/threat-model.md "Fuzzing").
        .executableTarget(name: "switchboard-fuzz", dependencies: ["RTP", "STUN", "ICE", "SDP", "Signaling", "DTLS", "SFU", "SplitMix"]),

        // MARK: Tests.
        .testTarget(name: "CallCoreTests", dependencies: ["CallCore", "SplitMix"]),
        .testTarget(name: "RTPTests", dependencies: ["RTP", "SplitMix"]),
        .testTarget(name: "STUNTests", dependencies: ["STUN", "CNice", "SplitMix"]),
        .testTarget(name: "AuthTests", dependencies: ["Auth"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "SplitMix"]),
        .testTarget(name: "IOTests", dependencies: ["IO", "CGLibLog", "CWebSocketStream"], swiftSettings: v5),
        .testTarget(name: "SignalingTests", dependencies: ["Signaling", "CallCore", "Storage", "Auth", "CAllocationCounter"]),
        .testTarget(name: "IntegrationTests", dependencies: ["SignalingClient", "IO", "Auth", "Peer", "NetEmu"], exclude: ["aiortc"], swiftSettings: v5),
        .testTarget(name: "BenchTests", dependencies: ["Bench", "SplitMix"], swiftSettings: v5),
        .testTarget(name: "ServerTests", dependencies: ["Server"], swiftSettings: v5),
        .testTarget(name: "SDPTests", dependencies: ["SDP", "SplitMix"], resources: [.copy("Fixtures")]),
        .testTarget(name: "SFUTests", dependencies: ["SFU", "RTP", "SplitMix", "CAllocationCounter"]),
        .testTarget(name: "SRTPTests", dependencies: ["SRTP", "CSRTPCrypto"]),
        .testTarget(name: "DTLSTests", dependencies: ["DTLS", "SRTP", "SplitMix"]),
        .testTarget(name: "ICETests", dependencies: ["ICE", "STUN", "CNice", "SplitMix"]),
        .testTarget(name: "MediaTests", dependencies: ["Media", "CSocket", "ICE", "STUN", "DTLS", "SRTP", "SDP", "SFU", "RTP", "SplitMix", "CAllocationCounter"], swiftSettings: v5),
        .testTarget(name: "PeerTests", dependencies: ["Peer", "Media", "ICE", "DTLS", "SRTP", "RTP", "SDP", "IO", "SignalingClient"], swiftSettings: v5),
        .testTarget(name: "NetEmuTests", dependencies: ["NetEmu"], swiftSettings: v5),
        .testTarget(name: "FuzzTests", dependencies: ["switchboard-fuzz"]),
        .testTarget(name: "SystemLibraryTests", dependencies: ["CNice", "CSRTP", "COpus", "COpenSSL", "CSoup", "CSQLite"]),
    ]
)

/// Release builds drop Swift's run-time exclusivity checks (`-enforce-exclusivity=unchecked`):
/// every access to a class's stored `var` paid a `swift_beginAccess`/`swift_endAccess` pair
/// with a thread-local access set, ~800 per call setup on the signaling hub, ~3 % of its
/// instructions (callgrind, docs/benchmarks.md "Exclusivity checks off in release builds").
/// Debug builds, which `swift test` runs, keep the checks, so a conflicting access still
/// traps under the whole test suite; the compile-time checks stay on in both.
let releaseOnly: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings = (target.swiftSettings ?? []) + releaseOnly
}
